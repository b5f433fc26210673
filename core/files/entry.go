package files

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
)

// Entry is a file as clients read it (CONTRACT §5 `files` entries, and
// the items of GET /files): ids, names, metadata, is_image and the
// download address; thumb_url is the thumbnail's for a raster image, null
// for anything else.
func Entry(ctx context.Context, app string, f *File) map[string]any {
	var thumb any
	if f.ThumbKey != "" {
		thumb = auth.SignedURL(ctx, urlOf(app, f.ID, "thumb"))
	}
	return map[string]any{
		"id": f.ID, "filename": f.Filename, "ext": f.Ext, "description": f.Description, "keywords": f.Keywords,
		"printable": f.Printable, "is_image": f.IsImage(), "mime": f.Mime, "size": f.Size, "sha256": f.SHA256,
		"created_at": f.CreatedAt, "creator": f.Creator,
		"url": auth.SignedURL(ctx, urlOf(app, f.ID, "download")), "thumb_url": thumb,
	}
}

// RecordFiles is the `files` section of a full record: the files linked to
// it in display order, each with its link_id and link_sort, in one query.
func RecordFiles(ctx context.Context, db *store.DB, app, table string, id int64) ([]map[string]any, error) {
	var out []map[string]any
	p := db.Pipeline()
	queueRecordFiles(ctx, p, db, app, table, id, func(files []map[string]any) { out = files })
	if err := p.Run(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// queueRecordFiles queues RecordFiles' query; done gets its answer.
func queueRecordFiles(ctx context.Context, p *store.Pipeline, db *store.DB, app, table string, id int64, done func([]map[string]any)) {
	queueFilesOf(ctx, p, db, app, table, []int64{id}, func(byRecord map[int64][]map[string]any) {
		out := byRecord[id]
		if out == nil {
			out = []map[string]any{}
		}
		done(out)
	})
}

// queueFilesOf queues one query for the files of many records of table,
// each record's as RecordFiles gives them (the sync pull reads a page of
// records at once); done gets them by record (none: absent).
func queueFilesOf(ctx context.Context, p *store.Pipeline, db *store.DB, app, table string, ids []int64, done func(map[int64][]map[string]any)) {
	args := make([]any, 0, len(ids)+1)
	args = append(args, table)
	for _, id := range ids {
		args = append(args, id)
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	p.Query(fmt.Sprintf("files of %s %v", table, ids[:min(len(ids), 3)]), `SELECT f.id, f.filename, f.ext, f.mime, f.size, f.sha256, f.description, f.keywords, f.printable, f.blob_key, COALESCE(f.thumb_key, ''), f.created_at, f.creator, l.id, l.sort, l.record_id FROM `+
		db.Sys("file_links")+` l JOIN `+db.Sys("files")+` f ON f.id = l.file_id WHERE l.tb = ? AND l.record_id IN (`+marks+`) ORDER BY l.record_id, l.sort, l.id`, args, func(rows store.Rows) error {
		out := map[int64][]map[string]any{}
		for rows.Next() {
			f := &File{}
			var linkID, recordID int64
			var sort int
			if err := rows.Scan(&f.ID, &f.Filename, &f.Ext, &f.Mime, &f.Size, &f.SHA256, &f.Description, &f.Keywords, &f.Printable, &f.BlobKey, &f.ThumbKey, &f.CreatedAt, &f.Creator, &linkID, &sort, &recordID); err != nil {
				return err
			}
			e := Entry(ctx, app, f)
			e["link_id"], e["link_sort"] = linkID, sort
			out[recordID] = append(out[recordID], e)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		done(out)
		return nil
	})
}

// Section gives the full record its files (records.FilesSource and
// records.FilesQueuer).
type Section struct{}

// RecordFiles implements records.FilesSource.
func (Section) RecordFiles(ctx context.Context, db *store.DB, app, table string, id int64) (any, error) {
	return RecordFiles(ctx, db, app, table, id)
}

// QueueRecordFiles implements records.FilesQueuer: the files come in the
// record's pipeline.
func (Section) QueueRecordFiles(ctx context.Context, p *store.Pipeline, app, table string, id int64, done func(any)) {
	queueRecordFiles(ctx, p, p.DB(), app, table, id, func(files []map[string]any) { done(files) })
}

// RecordFilesExist implements records.FilesProber: whether the record has
// a file linked, on the index queueFilesOf's query uses.
func (Section) RecordFilesExist(db *store.DB, table string, id int64) (string, []any) {
	return `EXISTS (SELECT 1 FROM ` + db.Sys("file_links") + ` WHERE tb = ? AND record_id = ?)`, []any{table, id}
}

// QueueFilesOf implements records.FilesBatcher: the files of a page of
// records in one query of the page's pipeline.
func (Section) QueueFilesOf(ctx context.Context, p *store.Pipeline, app, table string, ids []int64, done func(map[int64]any)) {
	queueFilesOf(ctx, p, p.DB(), app, table, ids, func(byRecord map[int64][]map[string]any) {
		out := make(map[int64]any, len(byRecord))
		for id, files := range byRecord {
			out[id] = files
		}
		done(out)
	})
}
