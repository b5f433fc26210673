package bradypus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// BraDypUS's Zotero data (M023: bdus_zotero_libs, bdus_zotero_links;
// controllers/Zotero.php) becomes the refmgr plugin's (PLUGINS.md §13):
// its system tables sys_refmgr_libs and sys_refmgr_links, the same
// columns with refmgr_ for zotero_. The tables are the plugin's own, so the
// plugin must be running; they are written through the host
// (pluginhost.Manager.InsertSystemRows) inside the upgrade's transaction.
const (
	refmgrPlugin = "refmgr"
	refmgrLibs   = "libs"
	refmgrLinks  = "links"
	// refmgrKeyPurpose is what the plugin seals a library's API key for
	// (PLUGINS.md §13, Storage): the key is sealed here as the plugin's
	// Host.Seal would, so the plugin opens it as one of its own.
	refmgrKeyPurpose = "library_api_key"
	// refmgrBatch rows per InsertSystemRows call.
	refmgrBatch = 500
)

// hasZotero reports whether the file holds Zotero libraries or links.
func (la *legacyApp) hasZotero(ctx context.Context) (bool, error) {
	for _, t := range []string{"bdus_zotero_libs", "bdus_zotero_links"} {
		n, err := la.count(ctx, t)
		if err != nil {
			return false, fmt.Errorf("count %s: %w", t, err)
		}
		if n > 0 {
			return true, nil
		}
	}
	return false, nil
}

// legacyRows reads cols of a table of the file (NULL for a column the
// file's version of it lacks), bytes as text, in id order.
func (la *legacyApp) legacyRows(ctx context.Context, table string, cols []string) ([][]any, error) {
	if !la.tables[table] {
		return nil, nil
	}
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = "NULL"
		if la.columnExists(ctx, table, c) {
			sel[i] = quoteLegacy(c)
		}
	}
	rows, err := la.db.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM `+quoteLegacy(table)+` ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i := range vals {
			vals[i] = text(vals[i])
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// stamp is a BraDypUS time (unix seconds) as refmgr writes its times
// (RFC 3339, UTC); none stays none.
func stamp(v any, now time.Time) any {
	if v == nil || str(v) == "" {
		return nil
	}
	return unixTime(v, now).Format(time.RFC3339)
}

// copyZotero converts the libraries (ids kept; the API key sealed for the
// plugin, never stored in clear) and the links (ids kept, with the cached
// citation, author–year, item version and sync time, so the bibliography
// shows at once and the next sync compares versions). A link keeps its
// table as BraDypUS wrote it, or the table's own name when it was written
// with the application's prefix (<app>_<tb>, as the plugin reads it); a
// link to a table or library that is not there is kept as BraDypUS kept
// it (the plugin lists it and lets it be removed), with a warning.
func (cv *conversion) copyZotero(ctx context.Context, tx *store.DB) (libs, links int, err error) {
	if !cv.la.zotero {
		return 0, 0, nil
	}
	now := cv.now
	lrows, err := cv.la.legacyRows(ctx, "bdus_zotero_libs", []string{"id", "type", "zotero_id", "name", "api_key", "citation_style", "created_at"})
	if err != nil {
		return 0, 0, err
	}
	known := map[int64]bool{}
	var out []map[string]any
	for _, r := range lrows {
		id, ok := asInt(r[0])
		if !ok || id <= 0 {
			return 0, 0, fmt.Errorf("reference library %v: not an id", r[0])
		}
		known[id] = true
		var sealed any
		if key := strings.TrimSpace(str(r[4])); key != "" {
			s, err := cv.plugins.Seal(refmgrPlugin, cv.app, refmgrKeyPurpose, key)
			if err != nil {
				return 0, 0, fmt.Errorf("reference library %d: its API key cannot be sealed: %w", id, err)
			}
			sealed = s
		}
		out = append(out, map[string]any{"id": id, "type": str(r[1]), "refmgr_id": str(r[2]), "name": str(r[3]),
			"api_key": sealed, "citation_style": r[5], "created_at": stamp(r[6], now)})
	}
	if err := cv.insertRefmgr(ctx, tx, refmgrLibs, out); err != nil {
		return 0, 0, err
	}
	cat, err := schema.Load(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	krows, err := cv.la.legacyRows(ctx, "bdus_zotero_links", []string{"id", "tb", "record_id", "lib_id", "zotero_key", "pages", "notes",
		"sort", "author_year", "full_citation", "zotero_version", "synced_at", "detached", "created_at"})
	if err != nil {
		return 0, 0, err
	}
	out = out[:0]
	for _, r := range krows {
		id, ok := asInt(r[0])
		if !ok || id <= 0 {
			return 0, 0, fmt.Errorf("reference link %v: not an id", r[0])
		}
		tb := str(r[1])
		if _, ok := cat.Table(tb); !ok {
			if bare, cut := strings.CutPrefix(tb, cv.app+"_"); cut {
				if _, ok := cat.Table(bare); ok {
					tb = bare
				}
			}
		}
		if _, ok := cat.Table(tb); !ok {
			cv.rep.warnf("reference link %d is on table %q, which the application does not have; it is kept as it was (it can be removed)", id, tb)
		}
		lib, _ := asInt(r[3])
		if !known[lib] {
			cv.rep.warnf("reference link %d names library %v, which is not there; it is kept as it was (it can be removed)", id, r[3])
		}
		version := any(nil)
		if n, ok := asInt(r[10]); ok {
			version = n
		}
		sortN := int64(0)
		if n, ok := asInt(r[7]); ok {
			sortN = n
		}
		detached := int64(0)
		if truthy(r[12]) && str(r[12]) != "" {
			detached = 1
		}
		out = append(out, map[string]any{"id": id, "tb": tb, "record_id": intOr(r[2]), "lib_id": intOr(r[3]), "refmgr_key": str(r[4]),
			"pages": r[5], "notes": r[6], "sort": sortN, "author_year": r[8], "full_citation": r[9], "refmgr_version": version,
			"synced_at": stamp(r[11], now), "detached": detached, "created_at": stamp(r[13], now)})
	}
	if err := cv.insertRefmgr(ctx, tx, refmgrLinks, out); err != nil {
		return 0, 0, err
	}
	return len(lrows), len(krows), nil
}

// intOr is v as an integer when it reads as one, else v.
func intOr(v any) any {
	if n, ok := asInt(v); ok {
		return n
	}
	return v
}

func (cv *conversion) insertRefmgr(ctx context.Context, tx *store.DB, table string, rows []map[string]any) error {
	// One call at least: it creates the plugin's tables, which the
	// verification counts.
	for start := 0; start == 0 || start < len(rows); start += refmgrBatch {
		if err := cv.plugins.InsertSystemRows(ctx, tx, refmgrPlugin, table, rows[start:min(start+refmgrBatch, len(rows))]); err != nil {
			return fmt.Errorf("refmgr %s: %w", table, err)
		}
	}
	return nil
}
