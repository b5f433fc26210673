package publish

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// A snapshot is built in one pass over each public table, through the
// public gate (scope.go), into a zip written to a temporary file and
// then stored whole in the files storage:
//
//	ro-crate-metadata.json   the RO-Crate descriptor, every file described
//	datapackage.json         the Frictionless package of the CSVs
//	data/<tb>.csv            a table's public fields of its published rows
//	data/<tb>_relations.csv  its stratigraphic relations among them
//	records/<tb>/<id>.json   each record as Linked Art JSON-LD
//	geo/<tb>.geojson         a table's geodata
//	datacite.xml             the dataset's DataCite metadata
//
// Memory is bounded by one export batch, the ids of the published rows
// (to drop references to rows that are not published) and one small
// description per file; every file is streamed.

// build is one run of a snapshot's job.
type build struct {
	ctx      context.Context
	db       *store.DB
	app      *apps.App
	snap     *Snapshot
	fr       Frozen
	cfg      *Config
	gate     *Gate
	now      time.Time
	tmpDir   string
	progress func(done, total int64)

	store         files.Storage // the application's files (images)
	skippedImages int64

	zw        *zip.Writer
	files     []crateFile
	published map[string]map[int64]bool // table → ids published
	done      int64
	total     int64
	records   int64
	prevItems int64 // the previous done snapshot's id (0: none)
	items     []item
	resources []tableResource
}

// crateFile is a file of the crate as RO-Crate describes it.
type crateFile struct {
	Path, Name, Description, Format string
	ConformsTo                      []string
	Size                            int64
	SHA256                          string
}

// item is a published record's row of sys_publish_items.
type item struct {
	tb      string
	rid     int64
	hash    string
	summary []byte
	doc     []byte
}

// itemBatch is how many item rows are written per statement.
const itemBatch = 200

// entry opens a file of the zip; close it before the next.
func (b *build) entry(path string) (*entryWriter, error) {
	w, err := b.zw.CreateHeader(&zip.FileHeader{Name: path, Method: zip.Deflate, Modified: b.now})
	if err != nil {
		return nil, fmt.Errorf("publish: %s: %w", path, err)
	}
	return &entryWriter{w: w, h: sha256.New()}, nil
}

// entryWriter counts and hashes what goes into one zip entry.
type entryWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (e *entryWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	e.h.Write(p[:n])
	e.n += int64(n)
	return n, err
}

func (e *entryWriter) sum() string { return hex.EncodeToString(e.h.Sum(nil)) }

// add writes one whole file into the zip and describes it.
func (b *build) add(f crateFile, write func(io.Writer) error) error {
	ew, err := b.entry(f.Path)
	if err != nil {
		return err
	}
	if err := write(ew); err != nil {
		return fmt.Errorf("publish: %s: %w", f.Path, err)
	}
	f.Size, f.SHA256 = ew.n, ew.sum()
	b.files = append(b.files, f)
	return nil
}

// addTemp copies a finished temporary file into the zip.
func (b *build) addTemp(f crateFile, tmp *os.File) error {
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return b.add(f, func(w io.Writer) error {
		_, err := io.Copy(w, tmp)
		return err
	})
}

// tempFile is a scratch file removed when the build ends.
func (b *build) tempFile() (*os.File, func(), error) {
	f, err := os.CreateTemp(b.tmpDir, "publish-*")
	if err != nil {
		return nil, nil, fmt.Errorf("publish: scratch file: %w", err)
	}
	return f, func() { f.Close(); os.Remove(f.Name()) }, nil
}

// tables are the public tables in a fixed order: the catalog's, parents
// before their plugin tables, so that the output does not depend on the
// order the admin listed them in.
func (b *build) tables() []*schema.Table {
	var out []*schema.Table
	for _, t := range b.gate.Catalog().Tables {
		if !t.IsPlugin {
			out = append(out, t)
		}
	}
	for _, t := range b.gate.Catalog().Tables {
		if t.IsPlugin {
			out = append(out, t)
		}
	}
	return out
}

// collectIDs reads the ids each public table publishes, for the progress
// total and to keep references only to rows that are published.
func (b *build) collectIDs() error {
	b.published = map[string]map[int64]bool{}
	for _, t := range b.tables() {
		sc, err := b.gate.Scope(b.ctx, t.Name)
		if err != nil {
			return err
		}
		q, args := sc.RowsSQL()
		rows, err := b.db.Query(b.ctx, q, args...)
		if err != nil {
			return fmt.Errorf("publish: ids of %s: %w", t.Name, err)
		}
		ids := map[int64]bool{}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		b.published[t.Name] = ids
		b.total += int64(len(ids))
	}
	return nil
}

// writeItems stores a batch of published records (sys_publish_items),
// each with the datestamp of the previous snapshot when its content is
// unchanged there, else the publication time.
func (b *build) writeItems() error {
	if len(b.items) == 0 {
		return nil
	}
	batch := b.items
	b.items = b.items[:0]
	prev := map[string]int64{} // tb/rid → datestamp of an unchanged item
	if b.prevItems != 0 {
		byTable := map[string][]any{}
		for _, it := range batch {
			byTable[it.tb] = append(byTable[it.tb], it.rid)
		}
		hashes := map[string]string{}
		for _, it := range batch {
			hashes[it.tb+"/"+strconv.FormatInt(it.rid, 10)] = it.hash
		}
		for tb, ids := range byTable {
			q := `SELECT rid, hash, datestamp FROM ` + b.db.Sys("publish_items") + ` WHERE snapshot = ? AND tb = ? AND deleted = ? AND rid IN (` + placeholders(len(ids)) + `)`
			rows, err := b.db.Query(b.ctx, q, append([]any{b.prevItems, tb, false}, ids...)...)
			if err != nil {
				return fmt.Errorf("publish: previous items: %w", err)
			}
			for rows.Next() {
				var rid, ds int64
				var h string
				if err := rows.Scan(&rid, &h, &ds); err != nil {
					rows.Close()
					return err
				}
				key := tb + "/" + strconv.FormatInt(rid, 10)
				if hashes[key] == h {
					prev[key] = ds
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
	}
	return b.db.Tx(b.ctx, func(tx *store.DB) error {
		for start := 0; start < len(batch); start += itemBatch {
			part := batch[start:min(start+itemBatch, len(batch))]
			args := make([]any, 0, len(part)*7)
			for _, it := range part {
				ds, ok := prev[it.tb+"/"+strconv.FormatInt(it.rid, 10)]
				if !ok {
					ds = b.now.UnixMilli()
				}
				args = append(args, it.tb, it.rid, b.snap.ID, ds, it.hash, string(it.summary), string(it.doc))
			}
			q := `INSERT INTO ` + tx.Sys("publish_items") + ` (tb, rid, snapshot, datestamp, hash, summary, doc) VALUES ` + repeatTuple("(?, ?, ?, ?, ?, ?, ?)", len(part))
			if _, err := tx.Exec(b.ctx, q, args...); err != nil {
				return fmt.Errorf("publish: items: %w", err)
			}
		}
		return nil
	})
}

// carryDeleted keeps, as deleted, every item of the previous snapshot
// this one no longer publishes (OAI-PMH's persistent deleted records):
// the datestamp of the deletion is this publication's, and nothing of the
// record's content is kept (it may have become private).
func (b *build) carryDeleted() error {
	if b.prevItems == 0 {
		return nil
	}
	it := b.db.Sys("publish_items")
	_, err := b.db.Exec(b.ctx, `INSERT INTO `+it+` (tb, rid, snapshot, datestamp, hash, deleted, summary, doc)
SELECT p.tb, p.rid, ?, CASE WHEN p.deleted = ? THEN p.datestamp ELSE ? END, '', ?, '{}', NULL FROM `+it+` p
WHERE p.snapshot = ? AND NOT EXISTS (SELECT 1 FROM `+it+` n WHERE n.snapshot = ? AND n.tb = p.tb AND n.rid = p.rid)`,
		b.snap.ID, true, b.now.UnixMilli(), true, b.prevItems, b.snap.ID)
	if err != nil {
		return fmt.Errorf("publish: deleted items: %w", err)
	}
	return nil
}

func placeholders(n int) string {
	var buf bytes.Buffer
	for i := range n {
		if i > 0 {
			buf.WriteString(", ")
		}
		buf.WriteByte('?')
	}
	return buf.String()
}

func repeatTuple(t string, n int) string {
	var buf bytes.Buffer
	for i := range n {
		if i > 0 {
			buf.WriteString(", ")
		}
		buf.WriteString(t)
	}
	return buf.String()
}

// step advances the progress by one record.
func (b *build) step() {
	b.done++
	if b.progress != nil && (b.done%100 == 0 || b.done == b.total) {
		b.progress(b.done, b.total)
	}
}

// recordURI is a record's stable URI: its landing page, under the
// application's public address.
func (b *build) recordURI(tb string, id int64) string {
	return RecordURI(b.fr.BaseURL, tb, id)
}

// RecordURI is the stable URI of a published record.
func RecordURI(base, tb string, id int64) string {
	return base + "/data/record/" + tb + "/" + strconv.FormatInt(id, 10)
}

// SnapshotURI is the landing page of a version.
func SnapshotURI(base string, version int64) string {
	return base + "/data/snapshot/" + strconv.FormatInt(version, 10)
}

// sortedIDs are a set's ids in order.
func sortedIDs(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// summaryOf is what landing pages and OAI-PMH's Dublin Core are written
// from: the record's published values, already cut by the gate.
type summary struct {
	Table      string         `json:"tb"`
	TableLabel string         `json:"table_label"`
	Kind       string         `json:"kind"`
	Term       *Term          `json:"term,omitempty"`
	Label      string         `json:"label"`
	Fields     []summaryField `json:"fields"`
	Relations  []summaryRel   `json:"relations,omitempty"`
}

type summaryField struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	Value any    `json:"value"`
	Link  string `json:"link,omitempty"` // a published record it refers to
}

type summaryRel struct {
	Relation string `json:"relation"`
	Target   string `json:"target"` // URI
	Label    string `json:"label"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own plain structs are marshalled
	}
	return b
}

var _ = records.ExportBatch
