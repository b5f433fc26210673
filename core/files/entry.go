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
	rows, err := db.Query(ctx, `SELECT f.id, f.filename, f.ext, f.mime, f.size, f.sha256, f.description, f.keywords, f.printable, f.blob_key, COALESCE(f.thumb_key, ''), f.created_at, f.creator, l.id, l.sort FROM `+
		db.Sys("file_links")+` l JOIN `+db.Sys("files")+` f ON f.id = l.file_id WHERE l.tb = ? AND l.record_id = ? ORDER BY l.sort, l.id`, table, id)
	if err != nil {
		return nil, fmt.Errorf("files of %s %d: %w", table, id, err)
	}
	defer rows.Close()
	out := []map[string]any{}
	for rows.Next() {
		f := &File{}
		var linkID int64
		var sort int
		if err := rows.Scan(&f.ID, &f.Filename, &f.Ext, &f.Mime, &f.Size, &f.SHA256, &f.Description, &f.Keywords, &f.Printable, &f.BlobKey, &f.ThumbKey, &f.CreatedAt, &f.Creator, &linkID, &sort); err != nil {
			return nil, err
		}
		e := Entry(ctx, app, f)
		e["link_id"], e["link_sort"] = linkID, sort
		out = append(out, e)
	}
	return out, rows.Err()
}

// Section gives the full record its files (records.FilesSource).
type Section struct{}

// RecordFiles implements records.FilesSource.
func (Section) RecordFiles(ctx context.Context, db *store.DB, app, table string, id int64) (any, error) {
	return RecordFiles(ctx, db, app, table, id)
}
