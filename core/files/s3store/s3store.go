// Package s3store is the S3-compatible backend of files.Storage, so that
// several server nodes can share one file store. A blob lives in one
// bucket under <prefix><app>/<key>, the key generated here (never a
// client's file name).
//
// The client is github.com/minio/minio-go/v7: one small, actively kept
// module that speaks plain S3 to any compatible server (AWS, MinIO, Ceph,
// Garage, R2, …), streams an upload of unknown length as a multipart
// upload and aborts it on failure, and hands back an object reader that
// seeks through ranged GETs. aws-sdk-go-v2 would do the same with a dozen
// modules and its own transfer manager on top.
//
// Put streams: the body is cut into parts of PartSize bytes (one pooled
// buffer of that size per upload in flight), each sent as it fills; the
// object appears only when the upload is completed, and a failed or
// cancelled read aborts the upload, so a blob is whole or absent. A body
// shorter than one part goes in a single PUT, atomic by itself.
package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/strata-archaeo/strata/core/files"
)

// PartSize is the size of one part of a streamed upload, and so the memory
// one upload in flight holds: S3's minimum part size (5 MiB). With S3's
// 10,000 parts an object may reach about 48 GiB.
const PartSize = 5 << 20

// Options configure a store (STRATA_S3_* in the instance configuration).
type Options struct {
	// Endpoint is the server's base URL, http:// or https:// (default
	// https://s3.amazonaws.com).
	Endpoint string
	Bucket   string
	Region   string
	// AccessKey and SecretKey sign requests; both empty uses the usual
	// AWS_* / MINIO_* environment variables, then an instance role.
	AccessKey string
	SecretKey string
	// Prefix is put before every object name as is (e.g. "strata/").
	Prefix string
	// PathStyle always addresses the bucket in the path
	// (http://host/bucket/key); false lets the client choose: the host
	// name on AWS and Google, the path elsewhere.
	PathStyle bool
	// Transport overrides the HTTP transport (tests trust their own
	// certificate this way).
	Transport http.RoundTripper
}

// Store keeps blobs in one bucket.
type Store struct {
	client *minio.Client
	bucket string
	prefix string
}

// DefaultEndpoint is used when Options.Endpoint is empty.
const DefaultEndpoint = "https://s3.amazonaws.com"

// New builds a store; it does not contact the server (see Check).
func New(o Options) (*Store, error) {
	if o.Bucket == "" {
		return nil, errors.New("s3store: no bucket")
	}
	endpoint := o.Endpoint
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("s3store: endpoint %q is not an http:// or https:// base URL", endpoint)
	}
	var creds *credentials.Credentials
	if o.AccessKey != "" || o.SecretKey != "" {
		creds = credentials.NewStaticV4(o.AccessKey, o.SecretKey, "")
	} else {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.EnvMinio{}, &credentials.IAM{},
		})
	}
	lookup := minio.BucketLookupAuto
	if o.PathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        creds,
		Secure:       u.Scheme == "https",
		Region:       o.Region,
		BucketLookup: lookup,
		Transport:    o.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("s3store: %w", err)
	}
	return &Store{client: c, bucket: o.Bucket, prefix: o.Prefix}, nil
}

// Check confirms that the bucket exists and the credentials reach it.
func (s *Store) Check(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("S3 bucket %q at %s is not reachable: %w", s.bucket, s.client.EndpointURL().Redacted(), err)
	}
	if !ok {
		return fmt.Errorf("S3 bucket %q does not exist at %s", s.bucket, s.client.EndpointURL().Redacted())
	}
	return nil
}

// errBadName refuses an app name or key that could name another object.
var errBadName = errors.New("s3store: invalid app or key")

// object is the blob's object name.
func (s *Store) object(app, key string) (string, error) {
	if !files.ValidBlobName(app, key) {
		return "", errBadName
	}
	return s.prefix + app + "/" + key, nil
}

// Put streams r into a new object. A body that fits in one part goes in
// one PUT; a longer one through a multipart upload, one part sent as each
// fills, completed at the end and aborted on any error (a failed read, a
// truncated body, a cancelled ctx), so nothing is left behind.
func (s *Store) Put(ctx context.Context, app string, r io.Reader) (string, int64, error) {
	key, err := files.NewBlobKey()
	if err != nil {
		return "", 0, err
	}
	name, err := s.object(app, key)
	if err != nil {
		return "", 0, err
	}
	n, err := s.putObject(ctx, name, r)
	if err != nil {
		return "", 0, err
	}
	return key, n, nil
}

// putObject streams r into the object name: whole or not at all.
func (s *Store) putObject(ctx context.Context, name string, r io.Reader) (int64, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	src := &ctxReader{ctx: ctx, r: r}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	n, last, err := readPart(src, buf)
	if err != nil {
		return 0, err
	}
	if last {
		if _, err := s.client.PutObject(ctx, s.bucket, name, bytes.NewReader(buf[:n]), int64(n), opts); err != nil {
			return 0, fmt.Errorf("s3store: put %s: %w", name, err)
		}
		return int64(n), nil
	}
	return s.putMultipart(ctx, name, src, buf, n, opts)
}

// Named objects live beside the blobs, under <prefix><area>/<app>/<name>,
// for what has a name of its own (backup archives). The caller validates
// names; area and app are checked here.
func (s *Store) named(area, app, name string) (string, error) {
	if !files.ValidBlobName(app, strings.Repeat("0", 32)) || area == "" || strings.ContainsAny(area+name, "/\\") || name == "" || strings.HasPrefix(name, ".") {
		return "", errBadName
	}
	return s.prefix + area + "/" + app + "/" + name, nil
}

// PutNamed stores r as a named object, whole or not at all.
func (s *Store) PutNamed(ctx context.Context, area, app, name string, r io.Reader) (int64, error) {
	obj, err := s.named(area, app, name)
	if err != nil {
		return 0, err
	}
	return s.putObject(ctx, obj, r)
}

// GetNamed opens a named object (files.ErrBlobNotFound when missing).
func (s *Store) GetNamed(ctx context.Context, area, app, name string) (files.Blob, error) {
	obj, err := s.named(area, app, name)
	if err != nil {
		return nil, files.ErrBlobNotFound
	}
	o, err := s.client.GetObject(ctx, s.bucket, obj, minio.GetObjectOptions{})
	if err != nil {
		return nil, mapErr(err)
	}
	st, err := o.Stat()
	if err != nil {
		o.Close()
		return nil, mapErr(err)
	}
	return &blob{Object: o, info: files.BlobInfo{Key: name, Size: st.Size, ModTime: st.LastModified}}, nil
}

// DeleteNamed removes a named object (files.ErrBlobNotFound when missing).
func (s *Store) DeleteNamed(ctx context.Context, area, app, name string) error {
	obj, err := s.named(area, app, name)
	if err != nil {
		return files.ErrBlobNotFound
	}
	if _, err := s.client.StatObject(ctx, s.bucket, obj, minio.StatObjectOptions{}); err != nil {
		return mapErr(err)
	}
	return s.client.RemoveObject(ctx, s.bucket, obj, minio.RemoveObjectOptions{})
}

// ListNamed lists an app's named objects of an area.
func (s *Store) ListNamed(ctx context.Context, area, app string, fn func(files.BlobInfo) error) error {
	probe, err := s.named(area, app, "x")
	if err != nil {
		return err
	}
	prefix := strings.TrimSuffix(probe, "x")
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return obj.Err
		}
		if err := fn(files.BlobInfo{Key: strings.TrimPrefix(obj.Key, prefix), Size: obj.Size, ModTime: obj.LastModified}); err != nil {
			return err
		}
	}
	return nil
}

// putMultipart uploads buf[:n] as the first part and the rest of src
// after it, reusing buf.
func (s *Store) putMultipart(ctx context.Context, name string, src io.Reader, buf []byte, n int, opts minio.PutObjectOptions) (size int64, err error) {
	core := minio.Core{Client: s.client}
	id, err := core.NewMultipartUpload(ctx, s.bucket, name, opts)
	if err != nil {
		return 0, fmt.Errorf("s3store: start upload of %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			// Abort even when ctx is the reason for failing.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if aerr := core.AbortMultipartUpload(actx, s.bucket, name, id); aerr != nil {
				err = errors.Join(err, fmt.Errorf("s3store: abort upload of %s: %w", name, aerr))
			}
		}
	}()
	var parts []minio.CompletePart
	for num := 1; ; num++ {
		if num > maxParts {
			return 0, fmt.Errorf("s3store: %s: more than %d bytes", name, int64(maxParts)*PartSize)
		}
		p, err := core.PutObjectPart(ctx, s.bucket, name, id, num, bytes.NewReader(buf[:n]), int64(n), minio.PutObjectPartOptions{})
		if err != nil {
			return 0, fmt.Errorf("s3store: upload part %d of %s: %w", num, name, err)
		}
		parts = append(parts, minio.CompletePart{PartNumber: num, ETag: p.ETag})
		size += int64(n)
		var last bool
		n, last, err = readPart(src, buf)
		if err != nil {
			return 0, err
		}
		if last && n == 0 {
			break
		}
		if last {
			// The final, shorter part.
			num++
			p, err := core.PutObjectPart(ctx, s.bucket, name, id, num, bytes.NewReader(buf[:n]), int64(n), minio.PutObjectPartOptions{})
			if err != nil {
				return 0, fmt.Errorf("s3store: upload part %d of %s: %w", num, name, err)
			}
			parts = append(parts, minio.CompletePart{PartNumber: num, ETag: p.ETag})
			size += int64(n)
			break
		}
	}
	if _, err := core.CompleteMultipartUpload(ctx, s.bucket, name, id, parts, opts); err != nil {
		return 0, fmt.Errorf("s3store: complete upload of %s: %w", name, err)
	}
	return size, nil
}

// maxParts is S3's limit of parts in one upload.
const maxParts = 10000

var bufPool = sync.Pool{New: func() any { b := make([]byte, PartSize); return &b }}

// readPart fills buf from r; last reports that r ended within it.
func readPart(r io.Reader, buf []byte) (n int, last bool, err error) {
	n, err = io.ReadFull(r, buf)
	switch {
	case err == nil:
		return n, false, nil
	case errors.Is(err, io.EOF) || err == io.ErrUnexpectedEOF:
		// io.ReadFull's own: r ended (a truncated source body was
		// turned into errTruncated by ctxReader).
		return n, true, nil
	default:
		return 0, false, err
	}
}

// Get opens the object; reads and seeks become (ranged) GETs.
func (s *Store) Get(ctx context.Context, app, key string) (files.Blob, error) {
	name, err := s.object(app, key)
	if err != nil {
		return nil, files.ErrBlobNotFound
	}
	obj, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err != nil {
		return nil, mapErr(err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, mapErr(err)
	}
	return &blob{Object: obj, info: files.BlobInfo{Key: key, Size: st.Size, ModTime: st.LastModified}}, nil
}

// Delete removes the object (S3 answers a missing one with success too).
func (s *Store) Delete(ctx context.Context, app, key string) error {
	name, err := s.object(app, key)
	if err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{}); err != nil {
		if errors.Is(mapErr(err), files.ErrBlobNotFound) {
			return nil
		}
		return fmt.Errorf("s3store: delete %s: %w", name, err)
	}
	return nil
}

// Stat describes the object.
func (s *Store) Stat(ctx context.Context, app, key string) (files.BlobInfo, error) {
	name, err := s.object(app, key)
	if err != nil {
		return files.BlobInfo{}, files.ErrBlobNotFound
	}
	st, err := s.client.StatObject(ctx, s.bucket, name, minio.StatObjectOptions{})
	if err != nil {
		return files.BlobInfo{}, mapErr(err)
	}
	return files.BlobInfo{Key: key, Size: st.Size, ModTime: st.LastModified}, nil
}

// mapErr turns S3's not-found answers into files.ErrBlobNotFound.
func mapErr(err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == minio.NoSuchKey || resp.StatusCode == http.StatusNotFound && resp.Code != minio.NoSuchBucket {
		return files.ErrBlobNotFound
	}
	return err
}

type blob struct {
	*minio.Object
	info files.BlobInfo
}

func (b *blob) Info() files.BlobInfo { return b.info }

// ctxReader stops an upload when the request is cancelled, and keeps a
// truncated body from passing for a complete one.
// Its errors stick, so a later read cannot pass for a clean end.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if err := c.ctx.Err(); err != nil {
		c.err = err
		return 0, err
	}
	n, err := c.r.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// io.ReadFull's io.ErrUnexpectedEOF means "ended within the
		// part": a truncated body must not read as that and be stored.
		err = errTruncated
	}
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// errTruncated replaces io.ErrUnexpectedEOF from the body being stored.
var errTruncated = errors.New("s3store: body ended early (unexpected EOF)")

// String names the store for logs.
func (s *Store) String() string {
	return "s3://" + s.bucket + "/" + strings.TrimSuffix(s.prefix, "/")
}

// List lists the objects under the app's prefix.
func (s *Store) List(ctx context.Context, app string, fn func(files.BlobInfo) error) error {
	prefix, err := s.object(app, strings.Repeat("0", 32))
	if err != nil {
		return err
	}
	prefix = strings.TrimSuffix(prefix, strings.Repeat("0", 32))
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return obj.Err
		}
		key := strings.TrimPrefix(obj.Key, prefix)
		if !files.ValidBlobName(app, key) {
			continue
		}
		if err := fn(files.BlobInfo{Key: key, Size: obj.Size, ModTime: obj.LastModified}); err != nil {
			return err
		}
	}
	return nil
}

// SweepPartial counts (and aborts) the multipart uploads under the app's
// prefix that a crash left incomplete, started before before.
func (s *Store) SweepPartial(ctx context.Context, app string, before time.Time, remove bool) (int, error) {
	prefix, err := s.object(app, strings.Repeat("0", 32))
	if err != nil {
		return 0, err
	}
	prefix = strings.TrimSuffix(prefix, strings.Repeat("0", 32))
	n := 0
	for up := range s.client.ListIncompleteUploads(ctx, s.bucket, prefix, true) {
		if up.Err != nil {
			if minio.ToErrorResponse(up.Err).Code == "NoSuchUpload" {
				return n, nil // some servers answer so for "none"
			}
			return n, up.Err
		}
		if !up.Initiated.Before(before) {
			continue
		}
		n++
		if remove {
			if err := s.client.RemoveIncompleteUpload(ctx, s.bucket, up.Key); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}
