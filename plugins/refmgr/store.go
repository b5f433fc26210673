package main

import (
	"context"
	"sort"
	"time"

	"github.com/strata-archaeo/strata/plugins/refmgr/zotero"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// The plugin's system tables (sys_refmgr_libs, sys_refmgr_links).
const (
	tableLibs  = "libs"
	tableLinks = "links"
	// pageSize is how many rows one ReadSystemRows call asks for (the
	// server's cap).
	pageSize = 10000
)

// lib is a stored library; APIKey is the sealed key ("" for none).
type lib struct {
	ID            int64
	Type          string
	RefmgrID      string
	Name          string
	SealedKey     string
	CitationStyle string
	CreatedAt     string
}

func libOf(r map[string]any) lib {
	id, _ := pluginsdk.Int(r["id"])
	return lib{ID: id, Type: str(r["type"]), RefmgrID: str(r["refmgr_id"]), Name: str(r["name"]),
		SealedKey: str(r["api_key"]), CitationStyle: str(r["citation_style"]), CreatedAt: str(r["created_at"])}
}

// style is the library's citation style, the default when empty.
func (l lib) style() string {
	if l.CitationStyle == "" {
		return zotero.DefaultStyle
	}
	return l.CitationStyle
}

// wire is a library as answered: the key never, has_api_key instead.
func (l lib) wire() map[string]any {
	return map[string]any{"id": l.ID, "type": l.Type, "refmgr_id": l.RefmgrID, "name": l.Name,
		"citation_style": l.style(), "has_api_key": l.SealedKey != "", "created_at": l.CreatedAt}
}

// str reads a text column (nil: "").
func str(v any) string {
	s, _ := v.(string)
	return s
}

// num reads an integer column (nil or not a number: 0).
func num(v any) int64 {
	n, _ := pluginsdk.Int(v)
	return n
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

// readAll reads every row of a system table matching filter, a page at a
// time (by id, as the server orders them).
func readAll(ctx context.Context, h pluginsdk.Host, app, table string, filter map[string]any) ([]map[string]any, error) {
	var out []map[string]any
	var after int64
	for {
		f := map[string]any{"id": map[string]any{"_gt": after}}
		for k, v := range filter {
			f[k] = v
		}
		rows, err := h.ReadSystemRows(ctx, pluginsdk.SystemReadInput{App: app, Table: table, Filter: f, Limit: pageSize})
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if len(rows) < pageSize {
			return out, nil
		}
		after = num(rows[len(rows)-1]["id"])
	}
}

// libs reads the application's libraries, by id.
func libs(ctx context.Context, h pluginsdk.Host, app string) (map[int64]lib, error) {
	rows, err := readAll(ctx, h, app, tableLibs, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]lib, len(rows))
	for _, r := range rows {
		l := libOf(r)
		out[l.ID] = l
	}
	return out, nil
}

// findLib reads one library (ok false when there is none with id).
func findLib(ctx context.Context, h pluginsdk.Host, app string, id int64) (lib, bool, error) {
	rows, err := h.ReadSystemRows(ctx, pluginsdk.SystemReadInput{App: app, Table: tableLibs,
		Filter: map[string]any{"id": map[string]any{"_eq": id}}, Limit: 1})
	if err != nil || len(rows) == 0 {
		return lib{}, false, err
	}
	return libOf(rows[0]), true, nil
}

// linkWire is a stored link as answered, with refmgr_url (null for a
// user library) and the library's name.
func linkWire(r map[string]any, l lib, known bool) map[string]any {
	out := map[string]any{
		"id": num(r["id"]), "tb": str(r["tb"]), "record_id": num(r["record_id"]), "lib_id": num(r["lib_id"]),
		"refmgr_key": str(r["refmgr_key"]), "pages": r["pages"], "notes": r["notes"], "sort": num(r["sort"]),
		"author_year": r["author_year"], "full_citation": r["full_citation"], "refmgr_version": r["refmgr_version"],
		"synced_at": r["synced_at"], "detached": num(r["detached"]), "created_at": str(r["created_at"]),
		"refmgr_url": nil, "lib_name": nil,
	}
	if v, ok := pluginsdk.Int(r["refmgr_version"]); ok {
		out["refmgr_version"] = v
	}
	if known {
		out["lib_name"] = l.Name
		if u := zotero.PublicURL(zotero.Library{Type: l.Type, ID: l.RefmgrID}, str(r["refmgr_key"])); u != "" {
			out["refmgr_url"] = u
		}
	}
	return out
}

// sortLinks orders links as records show them: by sort, then id.
func sortLinks(rows []map[string]any) {
	sort.SliceStable(rows, func(i, j int) bool {
		si, sj := num(rows[i]["sort"]), num(rows[j]["sort"])
		if si != sj {
			return si < sj
		}
		return num(rows[i]["id"]) < num(rows[j]["id"])
	})
}
