package files

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// CheckOptions steer Check.
type CheckOptions struct {
	// Fix removes orphan blobs and partial uploads older than Grace; it
	// never deletes a file row (a row whose blob is missing is reported:
	// the file's bytes are lost, and only a person can decide).
	Fix bool
	// Grace protects what an upload in flight has written before its row
	// commits: only orphans older than this are removed (default 1 hour).
	Grace time.Duration
	Now   time.Time
}

// Problem is a file row that does not match the store.
type Problem struct {
	FileID int64  `json:"file_id"`
	Key    string `json:"key"`
	What   string `json:"what"` // missing_blob, missing_thumbnail, size_mismatch
	Detail string `json:"detail,omitempty"`
}

// CheckReport is what Check found (and, with Fix, did) for one app.
type CheckReport struct {
	App      string     `json:"app"`
	Files    int        `json:"files"`
	Blobs    int        `json:"blobs"`
	Orphans  []BlobInfo `json:"orphans"`
	Young    int        `json:"young_orphans"` // orphans within the grace period, left alone
	Problems []Problem  `json:"problems"`
	Partial  int        `json:"partial_uploads"`
	Removed  int        `json:"removed"`
}

// OK reports whether the app's files and store agree.
func (r *CheckReport) OK() bool {
	return len(r.Orphans) == 0 && len(r.Problems) == 0 && r.Partial == 0 && r.Young == 0
}

// Check compares app's file rows with its blobs in st (which must list:
// Lister): blobs no row names (orphans: an upload a crash cut between its
// blob and its row, a thumbnail left by a failed replace), rows whose blob
// or thumbnail is missing or of another size, and partial uploads.
func Check(ctx context.Context, db *store.DB, st Storage, app string, opt CheckOptions) (*CheckReport, error) {
	lister, ok := st.(Lister)
	if !ok {
		return nil, fmt.Errorf("files check: the store %T cannot list its blobs", st)
	}
	if opt.Grace <= 0 {
		opt.Grace = time.Hour
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	type row struct {
		id    int64
		size  int64
		thumb bool
	}
	// Rows first, then blobs: a blob written after the rows were read is
	// an orphan younger than the grace period, never removed.
	byKey := map[string]row{}
	rows, err := db.Query(ctx, `SELECT id, blob_key, COALESCE(thumb_key, ''), size FROM `+db.Sys("files"))
	if err != nil {
		return nil, fmt.Errorf("files check %s: %w", app, err)
	}
	rep := &CheckReport{App: app, Orphans: []BlobInfo{}, Problems: []Problem{}}
	for rows.Next() {
		var id, size int64
		var key, thumb string
		if err := rows.Scan(&id, &key, &thumb, &size); err != nil {
			rows.Close()
			return nil, err
		}
		rep.Files++
		byKey[key] = row{id: id, size: size}
		if thumb != "" {
			byKey[thumb] = row{id: id, size: -1, thumb: true}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	cutoff := opt.Now.Add(-opt.Grace)
	var remove []string
	err = lister.List(ctx, app, func(b BlobInfo) error {
		rep.Blobs++
		r, known := byKey[b.Key]
		if !known {
			if b.ModTime.Before(cutoff) {
				rep.Orphans = append(rep.Orphans, b)
				remove = append(remove, b.Key)
			} else {
				rep.Young++
			}
			return nil
		}
		seen[b.Key] = true
		if !r.thumb && r.size != b.Size {
			rep.Problems = append(rep.Problems, Problem{FileID: r.id, Key: b.Key, What: "size_mismatch",
				Detail: fmt.Sprintf("the row says %d bytes, the store holds %d", r.size, b.Size)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("files check %s: list blobs: %w", app, err)
	}
	for key, r := range byKey {
		if seen[key] {
			continue
		}
		what := "missing_blob"
		if r.thumb {
			what = "missing_thumbnail"
		}
		rep.Problems = append(rep.Problems, Problem{FileID: r.id, Key: key, What: what})
	}
	sort.Slice(rep.Problems, func(i, j int) bool {
		a, b := rep.Problems[i], rep.Problems[j]
		if a.FileID != b.FileID {
			return a.FileID < b.FileID
		}
		return a.What < b.What
	})
	if rep.Partial, err = lister.SweepPartial(ctx, app, cutoff, opt.Fix); err != nil {
		return nil, fmt.Errorf("files check %s: partial uploads: %w", app, err)
	}
	if opt.Fix {
		for _, key := range remove {
			if err := st.Delete(ctx, app, key); err != nil {
				return rep, fmt.Errorf("files check %s: remove %s: %w", app, key, err)
			}
			rep.Removed++
		}
		rep.Removed += rep.Partial
	}
	return rep, nil
}
