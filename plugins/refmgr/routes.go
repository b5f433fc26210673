package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/plugins/refmgr/zotero"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// maxText bounds the free-text fields a client sends (name, pages, notes).
const maxText = 10000

func success(w http.ResponseWriter, v map[string]any) {
	v["status"] = "success"
	pluginsdk.WriteJSON(w, http.StatusOK, v)
}

func missing(w http.ResponseWriter, what string) {
	pluginsdk.WriteError(w, http.StatusBadRequest, "parameter_missing", what)
}

func invalid(w http.ResponseWriter, what string) {
	pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_parameter", what)
}

// hostFailed answers a failed Host call, logging what the client does
// not see.
func hostFailed(w http.ResponseWriter, err error) {
	if err := pluginsdk.WriteHostError(w, err); err != nil {
		fmt.Fprintf(os.Stderr, "refmgr: host call: %v\n", err)
	}
}

// readBody decodes a JSON object body (numbers as json.Number); false
// when it answered 400.
func readBody(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	data, err := io.ReadAll(r.Body)
	if err == nil {
		var m map[string]any
		if m, err = pluginsdk.DecodeObject(data); err == nil {
			return m, true
		}
	}
	pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_json", "the body is not a JSON object")
	return nil, false
}

// textOf reads a text value, liberal about numbers ("12" and 12 alike);
// ok false for another type. A missing key or null is ("", true).
func textOf(v any) (string, bool) {
	switch t := v.(type) {
	case nil:
		return "", true
	case string:
		return strings.TrimSpace(t), true
	case fmt.Stringer: // json.Number
		return t.String(), true
	}
	return "", false
}

// intOf reads a positive id from a value or path parameter ("12" or 12).
func intOf(v any) (int64, bool) {
	n, ok := pluginsdk.Int(v)
	return n, ok && n > 0
}

// GET /refmgr/libs — {libs: [...]} by name, api_key never, has_api_key.
func (p *plugin) listLibs(w http.ResponseWriter, r *http.Request) {
	host, _ := p.current()
	all, err := libs(r.Context(), host, pluginsdk.ActorFrom(r).App)
	if err != nil {
		hostFailed(w, err)
		return
	}
	list := make([]lib, 0, len(all))
	for _, l := range all {
		list = append(list, l)
	}
	sortLibs(list)
	out := make([]map[string]any, len(list))
	for i, l := range list {
		out[i] = l.wire()
	}
	success(w, map[string]any{"libs": out})
}

// POST /refmgr/lib — {type, refmgr_id, name, api_key?, citation_style?}.
func (p *plugin) addLib(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	typ, ok1 := textOf(body["type"])
	id, ok2 := textOf(body["refmgr_id"])
	name, ok3 := textOf(body["name"])
	key, ok4 := textOf(body["api_key"])
	style, ok5 := textOf(body["citation_style"])
	switch {
	case !ok1 || !ok2 || !ok3 || !ok4 || !ok5:
		invalid(w, "type, refmgr_id, name, api_key and citation_style are text")
	case typ == "" || id == "" || name == "":
		missing(w, "type (user or group), refmgr_id and name are required")
	case typ != "user" && typ != "group":
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_library_type", "type is user or group")
	case !zotero.ValidLibrary(typ, id):
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_refmgr_id", "refmgr_id is the library's numeric id (a Zotero user or group id)")
	case len(name) > maxText || len(key) > 512:
		invalid(w, "name or api_key is too long")
	case style != "" && !zotero.ValidStyle(style):
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_citation_style", "citation_style is a CSL style id, e.g. apa or chicago-author-date")
	default:
		host, _ := p.current()
		app := pluginsdk.ActorFrom(r).App
		sealed := ""
		if key != "" {
			var err error
			if sealed, err = host.Seal(r.Context(), app, sealPurpose, key); err != nil {
				hostFailed(w, err)
				return
			}
		}
		if style == "" {
			style = zotero.DefaultStyle
		}
		ids, err := host.WriteSystemRows(r.Context(), pluginsdk.SystemWriteInput{App: app, Table: tableLibs, Upsert: []map[string]any{{
			"type": typ, "refmgr_id": id, "name": name, "api_key": nullable(sealed), "citation_style": style, "created_at": now(),
		}}})
		if err != nil {
			hostFailed(w, err)
			return
		}
		success(w, map[string]any{"code": "ok_lib_added", "id": ids[0]})
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// DELETE /refmgr/lib/:id — the library and its links.
func (p *plugin) deleteLib(w http.ResponseWriter, r *http.Request) {
	id, ok := intOf(pluginsdk.Param(r, "id"))
	if !ok {
		invalid(w, "the library id is a positive integer")
		return
	}
	host, _ := p.current()
	app := pluginsdk.ActorFrom(r).App
	if _, found, err := findLib(r.Context(), host, app, id); err != nil {
		hostFailed(w, err)
		return
	} else if !found {
		pluginsdk.WriteError(w, http.StatusNotFound, "lib_not_found", "no library with this id")
		return
	}
	links, err := readAll(r.Context(), host, app, tableLinks, map[string]any{"lib_id": map[string]any{"_eq": id}})
	if err != nil {
		hostFailed(w, err)
		return
	}
	// The links go first: should the library's delete then fail, it is
	// still listed and the admin deletes it again; the other order could
	// leave links to a library that no longer exists.
	if len(links) > 0 {
		ids := make([]int64, len(links))
		for i, l := range links {
			ids[i] = num(l["id"])
		}
		if _, err := host.WriteSystemRows(r.Context(), pluginsdk.SystemWriteInput{App: app, Table: tableLinks, DeleteIDs: ids}); err != nil {
			hostFailed(w, err)
			return
		}
	}
	if _, err := host.WriteSystemRows(r.Context(), pluginsdk.SystemWriteInput{App: app, Table: tableLibs, DeleteIDs: []int64{id}}); err != nil {
		hostFailed(w, err)
		return
	}
	success(w, map[string]any{"code": "ok_lib_deleted", "links_deleted": len(links)})
}

// library reads a library and opens its key for a provider call; false
// when it answered.
func (p *plugin) library(ctx context.Context, w http.ResponseWriter, app string, id int64) (lib, zotero.Library, bool) {
	host, _ := p.current()
	l, found, err := findLib(ctx, host, app, id)
	if err != nil {
		hostFailed(w, err)
		return lib{}, zotero.Library{}, false
	}
	if !found {
		pluginsdk.WriteError(w, http.StatusNotFound, "lib_not_found", "no library with this id")
		return lib{}, zotero.Library{}, false
	}
	zl, err := p.open(ctx, app, l)
	if err != nil {
		hostFailed(w, err)
		return lib{}, zotero.Library{}, false
	}
	return l, zl, true
}

// open is the provider's view of a library, its API key opened.
func (p *plugin) open(ctx context.Context, app string, l lib) (zotero.Library, error) {
	zl := zotero.Library{Type: l.Type, ID: l.RefmgrID}
	if l.SealedKey != "" {
		host, _ := p.current()
		key, err := host.Open(ctx, app, sealPurpose, l.SealedKey)
		if err != nil {
			return zl, err
		}
		zl.APIKey = key
	}
	return zl, nil
}

// providerError answers a failed provider call.
func providerError(w http.ResponseWriter, err error) {
	var rl *zotero.RateLimitError
	switch {
	case errors.As(err, &rl):
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(rl.RetryAfter.Seconds()))))
		pluginsdk.WriteError(w, http.StatusServiceUnavailable, "refmgr_rate_limited", "the reference manager asks to wait; try again later")
	case errors.Is(err, zotero.ErrNotFound):
		pluginsdk.WriteError(w, http.StatusBadGateway, "refmgr_library_not_found", "the reference manager does not know this library (or it is private and has no API key)")
	case errors.Is(err, zotero.ErrForbidden):
		pluginsdk.WriteError(w, http.StatusBadGateway, "refmgr_access_denied", "the library's API key does not give access")
	default:
		fmt.Fprintf(os.Stderr, "refmgr: provider: %v\n", err)
		pluginsdk.WriteError(w, http.StatusBadGateway, "refmgr_api_error", "the reference manager did not answer; try again later")
	}
}

// GET /refmgr/search?lib_id=&q=&limit= — {results: [{key, author_year,
// full_citation, refmgr_version, refmgr_url, title}]}.
func (p *plugin) search(w http.ResponseWriter, r *http.Request) {
	qs := r.URL.Query()
	q := strings.Join(strings.Fields(qs.Get("q")), " ")
	if qs.Get("lib_id") == "" || q == "" {
		missing(w, "lib_id and q are required")
		return
	}
	libID, ok := intOf(qs.Get("lib_id"))
	if !ok {
		invalid(w, "lib_id is a positive integer")
		return
	}
	if len(q) > 500 {
		invalid(w, "q is at most 500 characters")
		return
	}
	limit := 25
	if s := qs.Get("limit"); s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			invalid(w, "limit is an integer (1 to 100)")
			return
		}
		limit = min(max(n, 1), 100)
	}
	l, zl, ok := p.library(r.Context(), w, pluginsdk.ActorFrom(r).App, libID)
	if !ok {
		return
	}
	_, client := p.current()
	items, err := client.Search(r.Context(), zl, q, limit)
	if err != nil {
		providerError(w, err)
		return
	}
	results := make([]map[string]any, len(items))
	sem := make(chan struct{}, searchFetches)
	var wg sync.WaitGroup
	for i, it := range items {
		res := map[string]any{"key": it.Key, "author_year": zotero.AuthorYear(it), "full_citation": nil,
			"refmgr_version": it.Version, "refmgr_url": nullable(zotero.PublicURL(zl, it.Key)), "title": it.Data.Title}
		results[i] = res
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// A citation that cannot be read leaves the hit without one:
			// the author-year still lets the user pick it.
			if c, err := client.Citation(r.Context(), zl, it.Key, l.style()); err == nil {
				res["full_citation"] = c
			}
		}()
	}
	wg.Wait()
	success(w, map[string]any{"results": results})
}

// record resolves table tb and checks that the caller may see its record
// id (if it exists); it returns the table's name, "" when it answered. BraDypUS names
// tables with the application's prefix (<app>_us): that name is taken
// for the table's own when the catalog has no table of that name.
func (p *plugin) record(w http.ResponseWriter, r *http.Request, tb string, id int64) string {
	host, _ := p.current()
	actor := pluginsdk.ActorFrom(r)
	cat, err := host.Catalog(r.Context(), actor.App)
	if err != nil {
		hostFailed(w, err)
		return ""
	}
	if _, ok := cat.Table(tb); !ok {
		bare, cut := strings.CutPrefix(tb, actor.App+"_")
		if _, ok := cat.Table(bare); !cut || !ok {
			pluginsdk.WriteError(w, http.StatusNotFound, "table_not_found", "no table "+tb)
			return ""
		}
		tb = bare
	}
	visible, err := exists(r.Context(), host, actor.App, tb, id, &actor)
	if err == nil && !visible {
		// A record the caller may not see is refused; one that does not
		// exist at all is not: BraDypUS keeps links by table name and id
		// without a check, and its clients (and suite) link ahead of the
		// record.
		var any bool
		if any, err = exists(r.Context(), host, actor.App, tb, id, nil); err == nil && any {
			pluginsdk.WriteError(w, http.StatusNotFound, "record_not_found", "no record with this id (or not one you may read)")
			return ""
		}
	}
	if st, _ := status.FromError(err); err != nil && st.Code() == codes.NotFound {
		pluginsdk.WriteError(w, http.StatusNotFound, "table_not_found", "no table "+tb)
		return ""
	}
	if err != nil {
		hostFailed(w, err)
		return ""
	}
	return tb
}

// exists reports whether record id of tb is there for actor (nil: for
// the plugin, which sees every record).
func exists(ctx context.Context, host pluginsdk.Host, app, tb string, id int64, actor *pluginsdk.Actor) (bool, error) {
	rows, _, err := host.QueryRecords(ctx, pluginsdk.QueryRecordsInput{App: app, Table: tb,
		Filter: map[string]any{"id": map[string]any{"_eq": id}}, Columns: []string{"id"}, Limit: 1, Actor: actor})
	return len(rows) > 0, err
}

// recordParams reads :tb and :id; false when it answered.
func (p *plugin) recordParams(w http.ResponseWriter, r *http.Request) (string, int64, bool) {
	tb := pluginsdk.Param(r, "tb")
	id, ok := intOf(pluginsdk.Param(r, "id"))
	if !ok {
		invalid(w, "the record id is a positive integer")
		return "", 0, false
	}
	tb = p.record(w, r, tb, id)
	return tb, id, tb != ""
}

// recordLinks reads the links of records of tb, with their libraries.
func recordLinks(ctx context.Context, host pluginsdk.Host, app, tb string, ids []int64) ([]map[string]any, map[int64]lib, error) {
	rows, err := readAll(ctx, host, app, tableLinks, map[string]any{
		"tb": map[string]any{"_eq": tb}, "record_id": map[string]any{"_in": ids}})
	if err != nil || len(rows) == 0 {
		return rows, nil, err
	}
	all, err := libs(ctx, host, app)
	return rows, all, err
}

// GET /refmgr/links/:tb/:id — {links: [...]} by sort then id.
func (p *plugin) listLinks(w http.ResponseWriter, r *http.Request) {
	tb, id, ok := p.recordParams(w, r)
	if !ok {
		return
	}
	host, _ := p.current()
	rows, all, err := recordLinks(r.Context(), host, pluginsdk.ActorFrom(r).App, tb, []int64{id})
	if err != nil {
		hostFailed(w, err)
		return
	}
	sortLinks(rows)
	out := make([]map[string]any, 0, len(rows))
	for _, row := range rows {
		l, known := all[num(row["lib_id"])]
		out = append(out, linkWire(row, l, known))
	}
	success(w, map[string]any{"links": out})
}

// EnrichRecords gives the bibliography section: per record an object of
// its links by link id (as BraDypUS), {} for a record without any; each
// link carries zotero_key and zotero_url too.
func (p *plugin) EnrichRecords(ctx context.Context, call pluginsdk.EnrichCall) (map[int64]any, error) {
	out := make(map[int64]any, len(call.IDs))
	for _, id := range call.IDs {
		out[id] = map[string]any{}
	}
	if len(call.IDs) == 0 {
		return out, nil
	}
	host, _ := p.current()
	rows, all, err := recordLinks(ctx, host, call.Actor.App, call.Table, call.IDs)
	if err != nil {
		return nil, err
	}
	sortLinks(rows)
	for _, row := range rows {
		rec, ok := out[num(row["record_id"])].(map[string]any)
		if !ok {
			continue
		}
		l, known := all[num(row["lib_id"])]
		link := linkWire(row, l, known)
		// The section is read by Strata's clients and BraDypUS's alike:
		// BraDypUS's record view reads the item's key and page under
		// their zotero_* names (Record/Read.php, ZoteroSection.vue).
		link["zotero_key"], link["zotero_url"] = link["refmgr_key"], link["refmgr_url"]
		rec[strconv.FormatInt(num(row["id"]), 10)] = link
	}
	return out, nil
}

// POST /refmgr/link — {tb, record_id, lib_id, refmgr_key, pages?, notes?,
// sort?}: saves the link with the item's citation and author–year when
// the provider gives them (a provider that fails leaves them empty for
// the next sync; an item it does not have is saved detached).
func (p *plugin) addLink(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	tb, okTb := textOf(body["tb"])
	key, okKey := textOf(body["refmgr_key"])
	pages, okP := textOf(body["pages"])
	notes, okN := textOf(body["notes"])
	if body["tb"] == nil || body["record_id"] == nil || body["lib_id"] == nil || key == "" {
		missing(w, "tb, record_id, lib_id and refmgr_key are required")
		return
	}
	recID, okRec := intOf(body["record_id"])
	libID, okLib := intOf(body["lib_id"])
	var sortN int64
	okSort := true
	if body["sort"] != nil && body["sort"] != "" {
		sortN, okSort = pluginsdk.Int(body["sort"])
	}
	switch {
	case !okTb || tb == "" || !okRec || !okLib:
		invalid(w, "tb is a table name, record_id and lib_id positive integers")
		return
	case !okKey || !zotero.ValidKey(key):
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_refmgr_key", "refmgr_key is an item key of letters and digits, e.g. ABCD2345")
		return
	case !okP || !okN || len(pages) > maxText || len(notes) > maxText:
		invalid(w, "pages and notes are text")
		return
	case !okSort:
		invalid(w, "sort is an integer")
		return
	}
	app := pluginsdk.ActorFrom(r).App
	l, zl, ok := p.library(r.Context(), w, app, libID)
	if !ok {
		return
	}
	if tb = p.record(w, r, tb, recID); tb == "" {
		return
	}
	row := map[string]any{"tb": tb, "record_id": recID, "lib_id": libID, "refmgr_key": key,
		"pages": nullable(pages), "notes": nullable(notes), "sort": sortN, "detached": 0, "created_at": now()}
	ctx, cancel := context.WithTimeout(r.Context(), citationBudget)
	c := p.fetch(ctx, zl, l.style(), key)
	cancel()
	if c.err == nil {
		for k, v := range c.columns() {
			row[k] = v
		}
	} else {
		fmt.Fprintf(os.Stderr, "refmgr: citation of %s in library %d: %v\n", key, libID, c.err)
	}
	host, _ := p.current()
	ids, err := host.WriteSystemRows(r.Context(), pluginsdk.SystemWriteInput{App: app, Table: tableLinks, Upsert: []map[string]any{row}})
	if err != nil {
		hostFailed(w, err)
		return
	}
	row["id"] = ids[0]
	success(w, map[string]any{"code": "ok_link_added", "id": ids[0], "cached": c.err == nil, "link": linkWire(row, l, true)})
}

// findLink reads one link of a record the caller may see; false when it
// answered.
func (p *plugin) findLink(w http.ResponseWriter, r *http.Request, host pluginsdk.Host) (int64, bool) {
	id, ok := intOf(pluginsdk.Param(r, "id"))
	if !ok {
		invalid(w, "the link id is a positive integer")
		return 0, false
	}
	rows, err := host.ReadSystemRows(r.Context(), pluginsdk.SystemReadInput{App: pluginsdk.ActorFrom(r).App, Table: tableLinks,
		Filter: map[string]any{"id": map[string]any{"_eq": id}}, Limit: 1})
	if err != nil {
		hostFailed(w, err)
		return 0, false
	}
	if len(rows) == 0 {
		pluginsdk.WriteError(w, http.StatusNotFound, "link_not_found", "no link with this id")
		return 0, false
	}
	// Per-table rights and row subsets apply to a record's links too; a
	// link whose table is gone may still be changed or removed.
	cat, err := host.Catalog(r.Context(), pluginsdk.ActorFrom(r).App)
	if err != nil {
		hostFailed(w, err)
		return 0, false
	}
	if _, ok := cat.Table(str(rows[0]["tb"])); ok && p.record(w, r, str(rows[0]["tb"]), num(rows[0]["record_id"])) == "" {
		return 0, false
	}
	return id, true
}

// PATCH /refmgr/link/:id — {pages?, notes?, sort?}.
func (p *plugin) editLink(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	change := map[string]any{}
	for _, k := range []string{"pages", "notes"} {
		if v, sent := body[k]; sent {
			s, ok := textOf(v)
			if !ok || len(s) > maxText {
				invalid(w, k+" is text")
				return
			}
			change[k] = nullable(s)
		}
	}
	if v, sent := body["sort"]; sent {
		n, ok := pluginsdk.Int(v)
		if !ok {
			invalid(w, "sort is an integer")
			return
		}
		change["sort"] = n
	}
	if len(change) == 0 {
		missing(w, "send pages, notes or sort")
		return
	}
	host, _ := p.current()
	id, ok := p.findLink(w, r, host)
	if !ok {
		return
	}
	change["id"] = id
	if _, err := host.WriteSystemRows(r.Context(), pluginsdk.SystemWriteInput{App: pluginsdk.ActorFrom(r).App, Table: tableLinks,
		Upsert: []map[string]any{change}}); err != nil {
		hostFailed(w, err)
		return
	}
	success(w, map[string]any{"code": "ok_link_updated"})
}

// DELETE /refmgr/link/:id.
func (p *plugin) deleteLink(w http.ResponseWriter, r *http.Request) {
	host, _ := p.current()
	id, ok := p.findLink(w, r, host)
	if !ok {
		return
	}
	if _, err := host.WriteSystemRows(r.Context(), pluginsdk.SystemWriteInput{App: pluginsdk.ActorFrom(r).App, Table: tableLinks,
		DeleteIDs: []int64{id}}); err != nil {
		hostFailed(w, err)
		return
	}
	success(w, map[string]any{"code": "ok_link_deleted"})
}

// sortLibs orders libraries by name (case aside), then id.
func sortLibs(list []lib) {
	slices.SortFunc(list, func(a, b lib) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.ID, b.ID))
	})
}
