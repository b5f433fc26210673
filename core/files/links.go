package files

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/store"
)

// Link is one link of a file to a record.
type Link struct {
	ID       int64  `json:"id"`
	FileID   int64  `json:"file_id"`
	Table    string `json:"tb"`
	RecordID int64  `json:"record_id"`
	Sort     int    `json:"sort"`
}

// AddLink links an existing file to a record (a file may be linked to one
// record more than once, as BraDypUS allows).
func AddLink(ctx context.Context, db *store.DB, fileID int64, to Target) (int64, error) {
	var id int64
	err := db.Tx(ctx, func(tx *store.DB) error {
		if _, err := Get(ctx, tx, fileID); err != nil {
			return err
		}
		var err error
		id, err = addLink(ctx, tx, fileID, to)
		return err
	})
	return id, err
}

// GetLink reads one link.
func GetLink(ctx context.Context, db *store.DB, id int64) (*Link, error) {
	l := &Link{}
	err := db.QueryRow(ctx, `SELECT id, file_id, tb, record_id, sort FROM `+db.Sys("file_links")+` WHERE id = ?`, id).
		Scan(&l.ID, &l.FileID, &l.Table, &l.RecordID, &l.Sort)
	if errors.Is(err, sql.ErrNoRows) || id <= 0 {
		return nil, ErrLinkNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read file link %d: %w", id, err)
	}
	return l, nil
}

// DeleteLink removes a link; the file stays.
func DeleteLink(ctx context.Context, db *store.DB, id int64) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		var tb string
		var rec int64
		err := tx.QueryRow(ctx, `DELETE FROM `+tx.Sys("file_links")+` WHERE id = ? RETURNING tb, record_id`, id).Scan(&tb, &rec)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLinkNotFound
		}
		if err != nil {
			return fmt.Errorf("delete file link %d: %w", id, err)
		}
		return recordChanged(ctx, tx, tb, rec)
	})
}

// recordChanged notes in the change log (core/changes) that the files of
// record id of table changed: an update of the record.
func recordChanged(ctx context.Context, tx *store.DB, table string, id int64) error {
	return changes.Record(ctx, tx, changes.Entry{Table: table, RecordID: id, Op: changes.Update})
}

// linkedChanged notes an update of every record file id is linked to (its
// metadata or bytes changed: what their files sections show).
func linkedChanged(ctx context.Context, tx *store.DB, id int64) error {
	targets, err := linkedTargets(ctx, tx, id)
	if err != nil {
		return err
	}
	for _, t := range targets {
		if err := recordChanged(ctx, tx, t.Table, t.ID); err != nil {
			return err
		}
	}
	return nil
}

// LinksOf lists the links of files, by file id, in display order.
func LinksOf(ctx context.Context, db *store.DB, fileIDs []int64) (map[int64][]Link, error) {
	out := map[int64][]Link{}
	if len(fileIDs) == 0 {
		return out, nil
	}
	q := `SELECT id, file_id, tb, record_id, sort FROM ` + db.Sys("file_links") + ` WHERE file_id IN (` + marks(len(fileIDs)) + `) ORDER BY tb, record_id, sort, id`
	rows, err := db.Query(ctx, q, int64Args(fileIDs)...)
	if err != nil {
		return nil, fmt.Errorf("read file links: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l Link
		if err := rows.Scan(&l.ID, &l.FileID, &l.Table, &l.RecordID, &l.Sort); err != nil {
			return nil, err
		}
		out[l.FileID] = append(out[l.FileID], l)
	}
	return out, rows.Err()
}

// Sort sets the display order of links: each named link takes its
// position in order. Ids that name no link are ignored (BraDypUS's
// behaviour); the caller checks edit on the records of the links named
// (LinksByID) first.
func Sort(ctx context.Context, db *store.DB, order []int64) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		for i, id := range order {
			var tb string
			var rec int64
			err := tx.QueryRow(ctx, `UPDATE `+tx.Sys("file_links")+` SET sort = ? WHERE id = ? RETURNING tb, record_id`, i+1, id).Scan(&tb, &rec)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("sort file link %d: %w", id, err)
			}
			if err := recordChanged(ctx, tx, tb, rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// LinksByID reads the links named (missing ids are left out).
func LinksByID(ctx context.Context, db *store.DB, ids []int64) ([]Link, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.Query(ctx, `SELECT id, file_id, tb, record_id, sort FROM `+db.Sys("file_links")+` WHERE id IN (`+marks(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("read file links: %w", err)
	}
	defer rows.Close()
	var out []Link
	for rows.Next() {
		var l Link
		if err := rows.Scan(&l.ID, &l.FileID, &l.Table, &l.RecordID, &l.Sort); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func marks(n int) string {
	b := make([]byte, 0, 2*n)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '?')
	}
	return string(b)
}

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// urlOf is the download path of a file under the app's API.
func urlOf(app string, id int64, what string) string {
	return "/" + app + "/api/file/" + strconv.FormatInt(id, 10) + "/" + what
}
