package bradypus

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/geo"
	"github.com/strata-archaeo/strata/core/store"
)

// A BraDypUS file archive (read from its Record and File controllers):
// bdus_files (id, creator, ext, keywords, description, printable,
// filename: the original name without its extension), the bytes at
// files/<id>.<ext> in the application folder, and bdus_file_links (id,
// file_id, table_name, record_id, sort; M002, M033). Geodata: bdus_geodata
// (id, table_link, id_link, geometry: WKT, or GeoJSON text in older
// rows).

// stagedFile is a BraDypUS file whose bytes are in Strata's file store,
// waiting for its row.
type stagedFile struct {
	f       *files.File
	creator int64 // BraDypUS's creator when it was a user id (0: none)
}

// stageFiles stores the bytes of every file of bdus_files through the
// files area's store (local or S3, whichever the instance uses), before
// the conversion's transaction. A row whose bytes are missing or empty
// has nothing to bring: it is skipped with a warning (the report's counts
// show it). So is a row whose stored name would lead out of files/ (a
// slash, .., NUL in ext) or whose entry is a link or not a regular file
// (confine.go): never followed, named in the report's refused entries.
// What stageFiles returns must be inserted or discarded.
func stageFiles(ctx context.Context, svc *files.Service, app string, root *folderRoot, la *legacyApp, rep *Report) (out []stagedFile, err error) {
	if !la.tables["bdus_files"] {
		return nil, nil
	}
	if svc == nil {
		return nil, errors.New("the instance has no file store")
	}
	defer func() {
		if err != nil {
			discardFiles(svc, app, out)
			out = nil
		}
	}()
	sel := func(c string) string {
		if la.columnExists(ctx, "bdus_files", c) {
			return quoteLegacy(c)
		}
		return "NULL"
	}
	rows, err := la.db.QueryContext(ctx, `SELECT id, `+sel("creator")+`, COALESCE(`+sel("ext")+`, ''), `+sel("keywords")+`, `+sel("description")+`,
		`+sel("printable")+`, COALESCE(`+sel("filename")+`, '') FROM bdus_files ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read bdus_files: %w", err)
	}
	defer rows.Close()
	type legacyFile struct {
		id                    int64
		creator, printable    any
		ext, filename         string
		keywords, description sql.NullString
	}
	var all []legacyFile
	for rows.Next() {
		var lf legacyFile
		if err := rows.Scan(&lf.id, &lf.creator, &lf.ext, &lf.keywords, &lf.description, &lf.printable, &lf.filename); err != nil {
			return nil, err
		}
		all = append(all, lf)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	for _, lf := range all {
		base := strconv.FormatInt(lf.id, 10) + "." + lf.ext
		if lf.ext == "" {
			if _, err := root.lstat("files/" + base); err != nil {
				base = strconv.FormatInt(lf.id, 10)
			}
		}
		in, st, err := openStored(root, base)
		if e, ok := asRefused(err); ok {
			rep.refused(e)
			rep.warnf("file %d (%s.%s): %s is refused (%s): it would be read from outside files/ or is not a plain file; its row and links are not brought over",
				lf.id, lf.filename, lf.ext, strconv.Quote(e.Path), e.Reason)
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			rep.warnf("file %d (%s.%s): no files/%s in the folder; its row and links are not brought over", lf.id, lf.filename, lf.ext, base)
			continue
		}
		if err != nil {
			return out, fmt.Errorf("file %d: %w", lf.id, err)
		}
		name := lf.filename
		if lf.ext != "" {
			name += "." + lf.ext
		}
		sf, err := svc.Stage(ctx, app, files.Upload{Name: name, Body: in})
		in.Close()
		if errors.Is(err, files.ErrEmptyFile) {
			rep.warnf("file %d (%s): files/%s is empty; its row and links are not brought over", lf.id, name, base)
			continue
		}
		if err != nil {
			return out, fmt.Errorf("file %d (%s): %w", lf.id, name, err)
		}
		sf.ID, sf.CreatedAt = lf.id, st.ModTime().UTC()
		if lf.description.Valid && lf.description.String != "" {
			sf.Description = &lf.description.String
		}
		if lf.keywords.Valid && lf.keywords.String != "" {
			sf.Keywords = &lf.keywords.String
		}
		if n, ok := asInt(lf.printable); ok {
			sf.Printable = n != 0
		}
		s := stagedFile{f: sf}
		if n, ok := asInt(lf.creator); ok {
			s.creator = n
		}
		out = append(out, s)
	}
	rep.logf("%d files stored", len(out))
	return out, nil
}

// openStored opens files/<base> of the folder, base being one name built
// from a stored row.
func openStored(root *folderRoot, base string) (*os.File, fs.FileInfo, error) {
	if err := checkBase("files", base); err != nil {
		return nil, nil, err
	}
	return root.open("files/" + base)
}

// discardFiles removes the bytes of staged files whose rows were not kept.
func discardFiles(svc *files.Service, app string, staged []stagedFile) {
	for _, s := range staged {
		svc.Discard(app, s.f)
	}
}

// insertFiles writes the staged files' rows (ids kept; a creator who is
// not a user is left empty) and the links of those files.
func insertFiles(ctx context.Context, tx *store.DB, la *legacyApp, staged []stagedFile, users map[int64]bool) error {
	kept := map[int64]bool{}
	for _, s := range staged {
		s.f.Creator = nil
		if users[s.creator] {
			c := s.creator
			s.f.Creator = &c
		}
		if err := files.InsertKept(ctx, tx, s.f); err != nil {
			return err
		}
		kept[s.f.ID] = true
	}
	if !la.tables["bdus_file_links"] {
		return nil
	}
	rows, err := la.db.QueryContext(ctx, `SELECT id, file_id, table_name, record_id, COALESCE(sort, 0) FROM bdus_file_links ORDER BY id`)
	if err != nil {
		return fmt.Errorf("read bdus_file_links: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l files.Link
		if err := rows.Scan(&l.ID, &l.FileID, &l.Table, &l.RecordID, &l.Sort); err != nil {
			return err
		}
		if !kept[l.FileID] {
			continue // its file was not brought over (a warning says so)
		}
		if err := files.InsertLinkKept(ctx, tx, l); err != nil {
			return err
		}
	}
	return rows.Err()
}

// copyGeodata brings bdus_geodata over into the geo area's features, ids
// kept. A geometry Strata cannot read, or one of a table the application
// does not have, fails the upgrade: it would otherwise be lost.
func copyGeodata(ctx context.Context, tx *store.DB, la *legacyApp) (int, error) {
	if !la.tables["bdus_geodata"] {
		return 0, nil
	}
	known := map[string]bool{}
	for _, t := range la.Tables {
		known[t.Name] = true
	}
	rows, err := la.db.QueryContext(ctx, `SELECT id, COALESCE(table_link, ''), id_link, COALESCE(geometry, '') FROM bdus_geodata ORDER BY id`)
	if err != nil {
		return 0, fmt.Errorf("read bdus_geodata: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, rec int64
		var tb, text string
		if err := rows.Scan(&id, &tb, &rec, &text); err != nil {
			return n, err
		}
		if !known[tb] {
			return n, fmt.Errorf("geodata %d belongs to %q, which is not a table of the application", id, tb)
		}
		g, err := geo.ParseText(text)
		if err != nil {
			return n, fmt.Errorf("geodata %d of %s %d: %w", id, tb, rec, err)
		}
		if err := geo.InsertKept(ctx, tx, id, tb, rec, g); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}
