package publish

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// Snapshot states.
const (
	StatusRunning = "running"
	StatusDone    = "done"
	StatusFailed  = "failed"
)

// Errors of snapshots.
var (
	ErrRunning          = errs.New(errs.Conflict, "publish_running", "a snapshot is being made; wait for it to finish")
	ErrSnapshotNotFound = errs.New(errs.NotFound, "snapshot_not_found", "no such snapshot")
	ErrNotDone          = errs.New(errs.Conflict, "snapshot_not_done", "this snapshot is not finished")
)

// Frozen is what a snapshot was made with: the setting and the public
// address its URIs are under, fixed when it started.
type Frozen struct {
	Config  Config `json:"config"`
	BaseURL string `json:"base_url"` // https://host/<app>, no trailing slash
}

// Snapshot is one publication attempt and, once done, one version.
type Snapshot struct {
	ID          int64      `json:"id"`
	Version     *int64     `json:"version"`
	Status      string     `json:"status"`
	JobID       *int64     `json:"job_id"`
	Previous    *int64     `json:"previous"` // the version this one follows
	CreatedBy   *int64     `json:"created_by"`
	CreatedAt   time.Time  `json:"created_at"`
	PublishedAt *time.Time `json:"published_at"`
	Size        *int64     `json:"size"`
	SHA256      *string    `json:"sha256"`
	Records     *int64     `json:"records"`
	Files       *int64     `json:"files"`
	DOI         *string    `json:"doi"`
	DOIStatus   *string    `json:"doi_status"`
	DOIError    *DOIError  `json:"doi_error"` // the last minting's failure (doi_status failed)
	Error       *string    `json:"error"`
	Title       string     `json:"title"`
	Licence     string     `json:"licence"`

	frozen  Frozen
	blobKey *string
	doiRaw  *string
}

// Frozen is the setting the snapshot was made with.
func (s *Snapshot) Frozen() Frozen { return s.frozen }

const snapshotCols = `id, version, status, job_id, config, previous, created_by, created_at, published_at, blob_key, size, sha256, records, files, doi, doi_status, doi_state, error`

func scanSnapshot(row interface{ Scan(...any) error }) (*Snapshot, error) {
	var s Snapshot
	var cfg string
	var created int64
	var published *int64
	if err := row.Scan(&s.ID, &s.Version, &s.Status, &s.JobID, &cfg, &s.Previous, &s.CreatedBy, &created, &published,
		&s.blobKey, &s.Size, &s.SHA256, &s.Records, &s.Files, &s.DOI, &s.DOIStatus, &s.doiRaw, &s.Error); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(cfg), &s.frozen); err != nil {
		return nil, fmt.Errorf("publish: snapshot %d setting: %w", s.ID, err)
	}
	s.CreatedAt = time.UnixMilli(created).UTC()
	if published != nil {
		t := time.UnixMilli(*published).UTC()
		s.PublishedAt = &t
	}
	s.Title, s.Licence = s.frozen.Config.Title, s.frozen.Config.Licence
	s.DOIError = doiErrorOf(&s)
	return &s, nil
}

// startSnapshot records a running snapshot of fr, refused while another
// runs (the partial unique index decides, whichever node starts it).
func startSnapshot(ctx context.Context, db *store.DB, fr Frozen, user int64, now time.Time) (*Snapshot, error) {
	raw, err := json.Marshal(fr)
	if err != nil {
		return nil, err
	}
	var id int64
	err = db.Tx(ctx, func(tx *store.DB) error {
		var running int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+tx.Sys("publish_snapshots")+` WHERE status = 'running'`).Scan(&running); err != nil {
			return err
		}
		if running > 0 {
			return ErrRunning
		}
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM `+tx.Sys("publish_snapshots")).Scan(&id); err != nil {
			return err
		}
		var prev *int64
		if err := tx.QueryRow(ctx, `SELECT MAX(version) FROM `+tx.Sys("publish_snapshots")+` WHERE status = 'done'`).Scan(&prev); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("publish_snapshots")+` (id, status, config, previous, created_by, created_at) VALUES (?, 'running', ?, ?, ?, ?)`,
			id, string(raw), prev, nullID(user), now.UnixMilli())
		return err
	})
	if err != nil {
		if errors.Is(err, ErrRunning) || uniqueViolation(err) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("publish: start snapshot: %w", err)
	}
	return getSnapshot(ctx, db, id)
}

func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

func setJob(ctx context.Context, db *store.DB, id, job int64) error {
	_, err := db.Exec(ctx, `UPDATE `+db.Sys("publish_snapshots")+` SET job_id = ? WHERE id = ?`, job, id)
	return err
}

// getSnapshot reads snapshot id.
func getSnapshot(ctx context.Context, db *store.DB, id int64) (*Snapshot, error) {
	s, err := scanSnapshot(db.QueryRow(ctx, `SELECT `+snapshotCols+` FROM `+db.Sys("publish_snapshots")+` WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrSnapshotNotFound.With("id", id)
	}
	return s, err
}

// snapshotByVersion reads the done snapshot of version v.
func snapshotByVersion(ctx context.Context, db *store.DB, v int64) (*Snapshot, error) {
	s, err := scanSnapshot(db.QueryRow(ctx, `SELECT `+snapshotCols+` FROM `+db.Sys("publish_snapshots")+` WHERE version = ? AND status = 'done'`, v))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrSnapshotNotFound.With("version", v)
	}
	return s, err
}

// latestDone is the newest done snapshot (nil: none yet).
func latestDone(ctx context.Context, db *store.DB) (*Snapshot, error) {
	s, err := scanSnapshot(db.QueryRow(ctx, `SELECT `+snapshotCols+` FROM `+db.Sys("publish_snapshots")+` WHERE status = 'done' ORDER BY version DESC LIMIT 1`))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return s, err
}

// maxListed bounds the snapshots listed (newest first).
const maxListed = 500

// listSnapshots lists the snapshots, newest first; done ones only when
// doneOnly (the public list).
func listSnapshots(ctx context.Context, db *store.DB, doneOnly bool) ([]*Snapshot, error) {
	q := `SELECT ` + snapshotCols + ` FROM ` + db.Sys("publish_snapshots")
	if doneOnly {
		q += ` WHERE status = 'done'`
	}
	rows, err := db.Query(ctx, q+` ORDER BY id DESC LIMIT ?`, maxListed)
	if err != nil {
		return nil, fmt.Errorf("publish: list snapshots: %w", err)
	}
	defer rows.Close()
	out := []*Snapshot{}
	for rows.Next() {
		s, err := scanSnapshot(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// failSnapshot marks a snapshot failed with err's message and drops what
// it had staged.
func failSnapshot(ctx context.Context, db *store.DB, id int64, cause error) error {
	msg := cause.Error()
	if len(msg) > 2000 {
		msg = msg[:2000]
	}
	return db.Tx(ctx, func(tx *store.DB) error {
		if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("publish_items")+` WHERE snapshot = ?`, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE `+tx.Sys("publish_snapshots")+` SET status = 'failed', error = ? WHERE id = ? AND status = 'running'`, msg, id)
		return err
	})
}

// finished is what a build made.
type finished struct {
	BlobKey          string
	Size             int64
	SHA256           string
	Records, Files   int64
	Published        time.Time
	Version          int64
	PreviousSnapshot *int64 // the done snapshot before it (its items are dropped)
}

// doneSnapshot makes the snapshot a version, in one transaction with
// dropping the previous version's item rows (this one's replace them).
func doneSnapshot(ctx context.Context, db *store.DB, id int64, f finished) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		res, err := tx.Exec(ctx, `UPDATE `+tx.Sys("publish_snapshots")+` SET status = 'done', version = ?, published_at = ?, blob_key = ?, size = ?, sha256 = ?, records = ?, files = ?, error = NULL WHERE id = ? AND status = 'running'`,
			f.Version, f.Published.UnixMilli(), f.BlobKey, f.Size, f.SHA256, f.Records, f.Files, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("publish: snapshot %d is no longer running", id)
		}
		_, err = tx.Exec(ctx, `DELETE FROM `+tx.Sys("publish_items")+` WHERE snapshot <> ?`, id)
		return err
	})
}

// uniqueViolation reports a unique index refusing a row, on either
// engine (the running-snapshot index when two starts race).
func uniqueViolation(err error) bool {
	s := err.Error()
	return strings.Contains(s, "UNIQUE constraint") || strings.Contains(s, "23505") || strings.Contains(s, "duplicate key")
}
