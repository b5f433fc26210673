package files

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/store"
)

// Delete removes a file, its links and then its blob (a blob left by a
// failure after the rows went is a stray for `files check`).
func (s *Service) Delete(ctx context.Context, db *store.DB, app string, id int64, before Before) error {
	var gone *File
	err := db.Tx(ctx, func(tx *store.DB) error {
		f, err := Get(ctx, tx, id)
		if err != nil {
			return err
		}
		gone = f
		if before != nil {
			touched, err := linkedTargets(ctx, tx, id)
			if err == nil {
				err = before(ctx, tx, touched)
			}
			if err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `DELETE FROM `+tx.Sys("file_links")+` WHERE file_id = ? RETURNING tb, record_id`, id)
		if err != nil {
			return fmt.Errorf("delete links of file %d: %w", id, err)
		}
		var linked []Target
		for rows.Next() {
			var t Target
			if err := rows.Scan(&t.Table, &t.ID); err != nil {
				rows.Close()
				return err
			}
			linked = append(linked, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, t := range linked {
			if err := recordChanged(ctx, tx, t.Table, t.ID); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("files")+` WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete file %d: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.dropBlobs(app, gone)
	return nil
}

// Meta is a change of a file's metadata; nil fields are left alone.
type Meta struct {
	Description *string
	Keywords    *string
	Printable   *bool
	// Clear lists the text fields set to null ("description", "keywords").
	Clear []string
}

// Update changes a file's metadata.
func Update(ctx context.Context, db *store.DB, id int64, m Meta) (*File, error) {
	var out *File
	err := db.Tx(ctx, func(tx *store.DB) error {
		if _, err := Get(ctx, tx, id); err != nil {
			return err
		}
		sets, args := []string{}, []any{}
		for _, c := range []struct {
			col string
			v   any
			set bool
		}{{"description", m.Description, m.Description != nil}, {"keywords", m.Keywords, m.Keywords != nil}, {"printable", m.Printable, m.Printable != nil}} {
			if c.set {
				sets, args = append(sets, c.col+" = ?"), append(args, c.v)
			}
		}
		for _, col := range m.Clear {
			if col == "description" || col == "keywords" {
				sets = append(sets, col+" = NULL")
			}
		}
		if len(sets) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("files")+` SET `+strings.Join(sets, ", ")+` WHERE id = ?`, append(args, id)...); err != nil {
				return fmt.Errorf("update file %d: %w", id, err)
			}
			// The metadata is part of each linked record's files section.
			if err := linkedChanged(ctx, tx, id); err != nil {
				return err
			}
		}
		var err error
		out, err = Get(ctx, tx, id)
		return err
	})
	return out, err
}

// Replace stores new bytes for a file (up's Name, Body and MaxImageSize),
// keeping its id, metadata and links; the name and extension become the
// new upload's, and the image rules apply as on upload. The old blob goes once
// the row names the new one; a failure keeps the old file whole.
func (s *Service) Replace(ctx context.Context, db *store.DB, app string, id int64, up Upload) (*File, error) {
	old, err := Get(ctx, db, id)
	if err != nil {
		return nil, err
	}
	nf := *old
	nf.Filename, nf.Ext = SplitName(up.Name)
	nf.ThumbKey = ""
	if err := s.store(ctx, app, &nf, up); err != nil {
		return nil, err
	}
	err = db.Tx(ctx, func(tx *store.DB) error {
		if up.Before != nil {
			touched, err := linkedTargets(ctx, tx, id)
			if err == nil {
				err = up.Before(ctx, tx, touched)
			}
			if err != nil {
				return err
			}
		}
		r, err := tx.Exec(ctx, `UPDATE `+tx.Sys("files")+` SET filename = ?, ext = ?, mime = ?, size = ?, sha256 = ?, blob_key = ?, thumb_key = ? WHERE id = ? AND blob_key = ?`,
			nf.Filename, nf.Ext, nf.Mime, nf.Size, nf.SHA256, nf.BlobKey, nullKey(nf.ThumbKey), id, old.BlobKey)
		if err != nil {
			return fmt.Errorf("replace file %d: %w", id, err)
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrFileNotFound // deleted or replaced meanwhile
		}
		return linkedChanged(ctx, tx, id)
	})
	if err != nil {
		s.dropBlobs(app, &nf)
		return nil, err
	}
	s.dropBlobs(app, old)
	return &nf, nil
}
