// Package files holds the file archive of an application: metadata of
// uploaded files (sys_files), their links to records (sys_file_links), the
// rules of who may upload, read, link and delete them, and the Storage
// interface their bytes live behind (localstore is the local-disk
// backend). A file's name is metadata only; the blob it is stored under is
// named by the backend. It knows nothing of HTTP.
package files
