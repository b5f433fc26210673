// Package batch applies a list of record creations, updates and deletions
// (POST /<app>/api/batch) in one transaction, all or nothing, with the
// rules of the single record requests: privileges per table and per row,
// validation of every row before anything is kept, version snapshots,
// plugin hooks batched per feature (BeforeSave before the transaction,
// AfterSave after the commit). It knows nothing of HTTP: the server hands
// it the decoded body and a way to build the caller's scope on a table.
package batch
