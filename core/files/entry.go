package files

import (
	"context"
	"fmt"

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
	p.Query(fmt.Sprintf("files of %s %d", table, id), `SELECT f.id, f.filename, f.ext, f.mime, f.size, f.sha256, f.description, f.keywords, f.printable, f.blob_key, COALESCE(f.thumb_key, ''), f.created_at, f.creator, l.id, l.sort FROM `+
		db.Sys("file_links")+` l JOIN `+db.Sys("files")+` f ON f.id = l.file_id WHERE l.tb = ? AND l.record_id = ? ORDER BY l.sort, l.id`, []any{table, id}, func(rows store.Rows) error {
		out := []map[string]any{}
		for rows.Next() {
			f := &File{}
			var linkID int64
			var sort int
			if err := rows.Scan(&f.ID, &f.Filename, &f.Ext, &f.Mime, &f.Size, &f.SHA256, &f.Description, &f.Keywords, &f.Printable, &f.BlobKey, &f.ThumbKey, &f.CreatedAt, &f.Creator, &linkID, &sort); err != nil {
				return err
			}
			e := Entry(ctx, app, f)
			e["link_id"], e["link_sort"] = linkID, sort
			out = append(out, e)
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
