package backup

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/scratch"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/version"
)

// queryer is what reading tables needs: a pool, a connection or a
// transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Progress is told how much of a long operation is done.
type Progress func(done, total int64)

// blobRef is a stored blob an archive carries.
type blobRef struct {
	key    string
	sha256 string // "" when not recorded (thumbnails): hashed first
}

// Write writes the archive of app a to w: one consistent snapshot of every
// table, and the bytes of every file. Nothing is written to w until the
// tables are read and checksummed, so a failure leaves w empty or
// truncated (never a valid-looking archive). tmpDir holds the table parts
// meanwhile ("" : the system's).
func Write(ctx context.Context, a *apps.App, storage files.Storage, w io.Writer, tmpDir string, progress Progress) (*Manifest, error) {
	if progress == nil {
		progress = func(int64, int64) {}
	}
	spool, err := scratch.MkdirTemp(tmpDir, "strata-backup-")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	defer os.RemoveAll(spool)

	m := &Manifest{Format: Format, FormatVersion: FormatVersion, StrataVersion: version.Version,
		App: a.Name, Engine: string(a.DB.Engine), CreatedAt: time.Now().UTC().Truncate(time.Second)}
	var blobs []blobRef
	err = snapshot(ctx, a.DB, func(q queryer) error {
		var err error
		if m.Migration, err = lastMigration(ctx, q, a.DB); err != nil {
			return err
		}
		names, err := tableNames(ctx, q, a.DB.Engine, a.DB.Schema())
		if err != nil {
			return err
		}
		var total int64
		counts := map[string]int64{}
		for _, n := range names {
			var c int64
			if err := scanOne(ctx, q, `SELECT COUNT(*) FROM `+a.DB.Qualify(n), &c); err != nil {
				return fmt.Errorf("count %s: %w", n, err)
			}
			counts[n] = c
			total += c
		}
		var done int64
		for _, n := range names {
			t, err := dumpTable(ctx, q, a.DB, n, spool, func() {
				done++
				if done%1000 == 0 {
					progress(done, total)
				}
			})
			if err != nil {
				return err
			}
			m.Tables = append(m.Tables, *t)
			m.Counts.Rows += t.Rows
			switch {
			case n == "sys_users":
				m.Counts.Users = t.Rows
			case n == "sys_files":
				m.Counts.Files = t.Rows
			case !strings.HasPrefix(n, store.SystemTablePrefix):
				m.Counts.Records += t.Rows
			}
		}
		progress(done, total)
		blobs, err = blobsOf(ctx, q, a.DB)
		return err
	})
	if err != nil {
		return nil, err
	}
	m.Counts.Tables = len(m.Tables)
	// Thumbnails have no recorded checksum: hash them before the manifest.
	for i, b := range blobs {
		if b.sha256 != "" {
			continue
		}
		sum, size, err := hashBlob(ctx, storage, a.Name, b.key)
		if err != nil {
			return nil, err
		}
		blobs[i].sha256 = sum
		m.Counts.Bytes += size
	}
	for _, b := range blobs {
		info, err := storage.Stat(ctx, a.Name, b.key)
		if err != nil {
			return nil, fmt.Errorf("backup: file %s: %w", b.key, err)
		}
		m.Blobs = append(m.Blobs, Part{Path: "blobs/" + b.key, Size: info.Size, SHA256: b.sha256})
	}
	for _, t := range m.Tables {
		m.Counts.Bytes += t.Size
	}
	return m, writeArchive(ctx, m, storage, a.Name, spool, w)
}

func writeArchive(ctx context.Context, m *Manifest, storage files.Storage, app, spool string, w io.Writer) error {
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	head, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := addEntry(tw, manifestName, int64(len(head)), strings.NewReader(string(head)), m.CreatedAt); err != nil {
		return err
	}
	for _, t := range m.Tables {
		f, err := os.Open(filepath.Join(spool, t.Name+".ndjson"))
		if err != nil {
			return err
		}
		err = addEntry(tw, t.Path, t.Size, f, m.CreatedAt)
		f.Close()
		if err != nil {
			return err
		}
	}
	for _, b := range m.Blobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := strings.TrimPrefix(b.Path, "blobs/")
		blob, err := storage.Get(ctx, app, key)
		if err != nil {
			return fmt.Errorf("backup: file %s: %w", key, err)
		}
		h := sha256.New()
		err = addEntry(tw, b.Path, b.Size, io.TeeReader(blob, h), m.CreatedAt)
		blob.Close()
		if err != nil {
			return err
		}
		if hex.EncodeToString(h.Sum(nil)) != b.SHA256 {
			return ErrFileCorrupt.With("blob", key)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func addEntry(tw *tar.Writer, name string, size int64, r io.Reader, at time.Time) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: at, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return fmt.Errorf("backup: %s: %w", name, err)
	}
	n, err := io.Copy(tw, r)
	if err != nil {
		return fmt.Errorf("backup: %s: %w", name, err)
	}
	if n != size {
		return fmt.Errorf("backup: %s: %d bytes where %d were expected", name, n, size)
	}
	return nil
}

// snapshot runs fn over one read-only snapshot of the database: REPEATABLE
// READ on PostgreSQL; on SQLite a deferred read transaction on its own
// connection (WAL: writers go on meanwhile).
func snapshot(ctx context.Context, db *store.DB, fn func(q queryer) error) error {
	pool := db.Pool()
	if pool == nil || db.InTx() {
		return errors.New("backup: needs the app's pool, not a transaction")
	}
	if db.Engine == store.Postgres {
		tx, err := pool.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		defer tx.Rollback()
		return fn(tx)
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN DEFERRED`); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
	return fn(conn)
}

func scanOne(ctx context.Context, q queryer, query string, dest any, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dest); err != nil {
		return err
	}
	return rows.Close()
}

func lastMigration(ctx context.Context, q queryer, db *store.DB) (int, error) {
	var n int
	if err := scanOne(ctx, q, `SELECT COALESCE(MAX(id), 0) FROM `+db.Sys("migrations"), &n); err != nil {
		return 0, fmt.Errorf("backup: migrations: %w", err)
	}
	return n, nil
}

// dumpTable writes table's rows as NDJSON into spool and returns its part.
func dumpTable(ctx context.Context, q queryer, db *store.DB, table, spool string, row func()) (*Table, error) {
	cols, err := columnsOf(ctx, q, db.Engine, db.Schema(), table)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = db.Engine.Quote(c.Name)
	}
	order := ""
	for _, c := range cols {
		if c.Name == "id" {
			order = ` ORDER BY "id"`
		}
	}
	path := filepath.Join(spool, table+".ndjson")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	bw := bufio.NewWriterSize(cw, 256<<10)
	rows, err := q.QueryContext(ctx, `SELECT `+strings.Join(names, ", ")+` FROM `+db.Qualify(table)+order)
	if err != nil {
		return nil, fmt.Errorf("backup: read %s: %w", table, err)
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	t := &Table{Name: table, Columns: cols}
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	obj := make(map[string]any, len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("backup: read %s: %w", table, err)
		}
		for i, c := range cols {
			v, err := encodeValue(c.Kind, vals[i])
			if err != nil {
				return nil, fmt.Errorf("backup: %s.%s: %w", table, c.Name, err)
			}
			obj[c.Name] = v
		}
		if err := enc.Encode(obj); err != nil {
			return nil, fmt.Errorf("backup: write %s: %w", table, err)
		}
		t.Rows++
		row()
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("backup: read %s: %w", table, err)
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	t.Part = Part{Path: "tables/" + table + ".ndjson", Size: cw.n, SHA256: hex.EncodeToString(h.Sum(nil))}
	return t, f.Close()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// blobsOf lists the stored bytes the app's files use: originals with the
// checksum recorded for them, thumbnails without.
func blobsOf(ctx context.Context, q queryer, db *store.DB) ([]blobRef, error) {
	rows, err := q.QueryContext(ctx, `SELECT blob_key, sha256, COALESCE(thumb_key, '') FROM `+db.Sys("files")+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("backup: files: %w", err)
	}
	defer rows.Close()
	var out []blobRef
	seen := map[string]bool{}
	for rows.Next() {
		var key, sum, thumb string
		if err := rows.Scan(&key, &sum, &thumb); err != nil {
			return nil, err
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, blobRef{key: key, sha256: sum})
		}
		if thumb != "" && !seen[thumb] {
			seen[thumb] = true
			out = append(out, blobRef{key: thumb})
		}
	}
	return out, rows.Err()
}

func hashBlob(ctx context.Context, storage files.Storage, app, key string) (string, int64, error) {
	b, err := storage.Get(ctx, app, key)
	if err != nil {
		return "", 0, fmt.Errorf("backup: file %s: %w", key, err)
	}
	defer b.Close()
	var h hash.Hash = sha256.New()
	n, err := io.Copy(h, b)
	if err != nil {
		return "", 0, fmt.Errorf("backup: file %s: %w", key, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
