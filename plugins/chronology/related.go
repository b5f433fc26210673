package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/strata-archaeo/strata/plugins/chronology/chrono"
	"github.com/strata-archaeo/strata/pluginsdk"
)

const (
	// maxDensityPath is SPEC.md §4.6's limit on chrono_density_path.
	maxDensityPath = 8
	// maxRelatedRows bounds the rows read per related table and per hop of
	// a density path (ten Host pages): a density over more records than
	// that says truncated.
	maxRelatedRows = 100_000
	pageSize       = 10_000 // the Host's limit per call
	// inChunk is the filter language's cap on an _in list.
	inChunk = 1000
	// filterBudget keeps a click-through filter under the server's 64 KiB
	// cap on a raw filter, with room for the client to add conditions.
	filterBudget = 60_000
)

// relatedEntry is the density of one related table.
type relatedEntry struct {
	Table string `json:"tb"`
	Label string `json:"label"`
	// Column is, for the automatic hop, the column of tb holding the
	// record's id; a density path gives Path instead.
	Column    string         `json:"fk_col,omitempty"`
	Path      []string       `json:"path,omitempty"`
	Records   int            `json:"records"` // related rows read, dated or not
	Histogram chrono.Density `json:"histogram"`
	Peak      *chrono.Span   `json:"peak"` // the densest interval; null without dated rows
	// Filter selects the related rows in a list of tb (the click-through);
	// null, with FilterNote, when no filter of the language can hold them.
	Filter     any    `json:"filter"`
	FilterNote string `json:"filter_note,omitempty"`
	Truncated  bool   `json:"truncated"` // more rows than maxRelatedRows

	rows []map[string]any // the rows read, for sources
}

// source is a related table as BraDypUS clients read it ("sources"): its
// dated rows with their bounds and the click-through filter.
type source struct {
	Table   string        `json:"tb_id"`
	Label   string        `json:"tb_label"`
	Records []datedRecord `json:"records"`
	Filter  any           `json:"filter"`
}

type datedRecord struct {
	ID   any  `json:"id"`
	From *int `json:"from"`
	To   *int `json:"to"`
}

// sourcesOf lists the related tables that have dated rows.
func sourcesOf(related []relatedEntry) []source {
	out := []source{}
	for _, e := range related {
		var recs []datedRecord
		for _, r := range e.rows {
			from, to := intPtr(r[colFrom]), intPtr(r[colTo])
			if from != nil || to != nil {
				recs = append(recs, datedRecord{ID: r["id"], From: from, To: to})
			}
		}
		if len(recs) > 0 {
			out = append(out, source{Table: e.Table, Label: e.Label, Records: recs, Filter: e.Filter})
		}
	}
	return out
}

// relatedRoute serves GET /chrono/related/:tb/:id: for each table related
// to the record, the 60-bin density of its rows' datings, the peak interval
// and a click-through filter (SPEC.md §4.6).
//
// Without a chrono_density_path on tb, the related tables are its direct
// children (plugin tables, lookups, relations) where chronology is active,
// one entry per linking column, with the filter {<fk_col>: {_eq: id}}.
// With a path, the one entry is its last table, reached hop by hop through
// the listed tables, with the filter {id: {_in: [...]}}.
//
// ?from=&to= (years or tokens, both or neither) put every histogram on that
// fixed axis (chrono.HistogramIn); otherwise each covers its own data.
// Everything is read as the caller may see it.
func (p *plugin) relatedRoute(w http.ResponseWriter, r *http.Request) {
	tb := pluginsdk.Param(r, "tb")
	id, err := strconv.ParseInt(pluginsdk.Param(r, "id"), 10, 64)
	if err != nil || id <= 0 {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_parameter", "the record id is a positive integer")
		return
	}
	q := r.URL.Query()
	from, ok := yearParam(w, q, "from", true)
	if !ok {
		return
	}
	to, ok := yearParam(w, q, "to", false)
	if !ok {
		return
	}
	if (from == nil) != (to == nil) || (from != nil && *from > *to) {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_parameter", "a fixed axis needs both from and to, from ≤ to")
		return
	}
	host, err := p.hostOf()
	if err != nil {
		writeHostError(w, err)
		return
	}
	rd := reader{ctx: r.Context(), host: host, actor: pluginsdk.ActorFrom(r)}
	cat, err := host.Catalog(r.Context(), rd.actor.App)
	if err != nil {
		writeHostError(w, err)
		return
	}
	root, ok := cat.Table(tb)
	if !ok {
		pluginsdk.WriteError(w, http.StatusNotFound, "table_not_found", fmt.Sprintf("no table %q", tb))
		return
	}
	// The record itself must be visible: no densities of what hangs off a
	// record the caller may not see.
	rows, _, err := rd.page(tb, map[string]any{"id": map[string]any{"_eq": id}}, []string{"id"}, 0, 1)
	if err != nil {
		writeHostError(w, err)
		return
	}
	if len(rows) == 0 {
		pluginsdk.WriteError(w, http.StatusNotFound, "record_not_found", fmt.Sprintf("no record %d in %s", id, tb))
		return
	}

	var related []relatedEntry
	mode := "auto"
	if len(root.ChronoDensityPath) > 0 {
		mode = "path"
		if msg := checkPath(cat, root.Name, root.ChronoDensityPath); msg != "" {
			pluginsdk.WriteError(w, http.StatusConflict, "invalid_density_path", fmt.Sprintf("chrono_density_path of %s: %s", tb, msg))
			return
		}
		e, err := rd.pathDensity(cat, root.Name, id, root.ChronoDensityPath, from, to)
		if err != nil {
			writeHostError(w, err)
			return
		}
		related = append(related, e)
	} else {
		for _, link := range cat.Children(tb) {
			child, ok := cat.Table(link.Table)
			if !ok || !child.Features[feature] {
				continue
			}
			filter := map[string]any{link.Column: map[string]any{"_eq": id}}
			rows, truncated, err := rd.collect(link.Table, filter, []string{"id", colFrom, colTo}, maxRelatedRows)
			if hiddenTable(err) {
				continue // a table the caller may not read has no density for them
			}
			if err != nil {
				writeHostError(w, err)
				return
			}
			related = append(related, relatedEntry{Table: link.Table, Label: tableLabel(child), Column: link.Column,
				Records: len(rows), Histogram: intervals(rows).density(from, to), Filter: filter, Truncated: truncated, rows: rows})
		}
	}
	for i := range related {
		related[i].Peak = related[i].Histogram.Peak
	}
	if related == nil {
		related = []relatedEntry{}
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{
		"status": "success", "tb": tb, "id": id, "mode": mode, "related": related, "sources": sourcesOf(related),
	})
}

// checkPath re-checks a density path against the catalog as it is now (the
// server checks it when the table config is saved, but chronology may have
// been deactivated since): at most maxDensityPath tables, the root absent,
// no repeats, each a direct child of the one before, the last with
// chronology active. It returns what is wrong, or "".
func checkPath(cat *pluginsdk.Catalog, root string, path []string) string {
	if len(path) > maxDensityPath {
		return fmt.Sprintf("%d tables, at most %d", len(path), maxDensityPath)
	}
	parent := root
	for i, name := range path {
		t, ok := cat.Table(name)
		switch {
		case name == root:
			return "the path starts after the table itself and never returns to it"
		case slices.Contains(path[:i], name):
			return fmt.Sprintf("%q is listed twice", name)
		case !ok:
			return fmt.Sprintf("%q names no table", name)
		case len(linkColumns(cat, parent, name)) == 0:
			return fmt.Sprintf("%q is not a direct child of %q", name, parent)
		case i == len(path)-1 && !t.Features[feature]:
			return fmt.Sprintf("chronology is not active on %q, the last table", name)
		}
		parent = name
	}
	return ""
}

// linkColumns lists the columns of child holding ids of parent (usually
// one; two lookups to the same table give two).
func linkColumns(cat *pluginsdk.Catalog, parent, child string) []string {
	var cols []string
	for _, l := range cat.Children(parent) {
		if l.Table == child && !slices.Contains(cols, l.Column) {
			cols = append(cols, l.Column)
		}
	}
	return cols
}

// pathDensity walks a checked density path from the record, collecting the
// ids of each table's rows linked to the previous table's, and gives the
// density of the last table.
func (rd reader) pathDensity(cat *pluginsdk.Catalog, root string, id int64, path []string, from, to *int) (relatedEntry, error) {
	parent, ids := root, []int64{id}
	var prevIDs []int64
	truncated, prevTruncated := false, false
	var rows []map[string]any
	for i, name := range path {
		cols := []string{"id"}
		if i == len(path)-1 {
			cols = append(cols, colFrom, colTo)
		}
		got, t, err := rd.linked(name, linkColumns(cat, parent, name), ids, cols)
		if err != nil {
			return relatedEntry{}, err
		}
		prevIDs, prevTruncated = ids, truncated
		truncated = truncated || t
		rows, ids, parent = got, idsOf(got), name
	}
	last, prev := path[len(path)-1], root
	if len(path) > 1 {
		prev = path[len(path)-2]
	}
	t, _ := cat.Table(last)
	e := relatedEntry{Table: last, Label: tableLabel(t), Path: path, Records: len(rows), Histogram: intervals(rows).density(from, to), Truncated: truncated, rows: rows}
	// The click-through: the ids themselves when they fit in a filter,
	// else the link to the previous table's ids, which are fewer; neither
	// when a truncated walk lost some of them.
	var fits bool
	if !truncated {
		e.Filter, fits = inFilter([]string{"id"}, ids)
	}
	if !fits && !prevTruncated {
		e.Filter, fits = inFilter(linkColumns(cat, prev, last), prevIDs)
	}
	if !fits {
		e.Filter = nil
		e.FilterNote = fmt.Sprintf("%d related records are too many for a click-through filter", len(ids))
	}
	return e, nil
}

// inFilter selects rows whose cols hold one of ids: {col: {_in: ids}}, or
// an _or of chunks of the filter language's _in cap. ok is false when the
// filter would exceed filterBudget.
func inFilter(cols []string, ids []int64) (any, bool) {
	var alts []any
	for _, col := range cols {
		for c := range slices.Chunk(ids, inChunk) {
			alts = append(alts, map[string]any{col: map[string]any{"_in": c}})
		}
		if len(ids) == 0 {
			alts = append(alts, map[string]any{col: map[string]any{"_in": []int64{}}})
		}
	}
	var f any = map[string]any{"_or": alts}
	if len(alts) == 1 {
		f = alts[0]
	}
	b, err := json.Marshal(f)
	return f, err == nil && len(b) <= filterBudget
}

// reader makes the Host calls of one request, as the caller.
type reader struct {
	ctx   context.Context
	host  pluginsdk.Host
	actor pluginsdk.Actor
}

func (rd reader) page(table string, filter any, cols []string, offset, limit int) ([]map[string]any, int64, error) {
	return rd.host.QueryRecords(rd.ctx, pluginsdk.QueryRecordsInput{
		App: rd.actor.App, Table: table, Filter: filter, Columns: cols, Limit: limit, Offset: offset, Actor: &rd.actor,
	})
}

// collect reads up to limit matching rows, page by page; truncated when
// there were more.
func (rd reader) collect(table string, filter any, cols []string, limit int) (rows []map[string]any, truncated bool, err error) {
	for {
		got, total, err := rd.page(table, filter, cols, len(rows), min(pageSize, limit-len(rows)))
		if err != nil {
			return nil, false, err
		}
		rows = append(rows, got...)
		switch {
		case len(got) == 0 || int64(len(rows)) >= total:
			return rows, false, nil
		case len(rows) >= limit:
			return rows, true, nil
		}
	}
}

// linked reads the rows of table whose link columns hold one of parents,
// up to maxRelatedRows, each once.
func (rd reader) linked(table string, links []string, parents []int64, cols []string) ([]map[string]any, bool, error) {
	var rows []map[string]any
	seen := map[int64]bool{}
	for chunk := range slices.Chunk(parents, inChunk) {
		f, _ := inFilter(links, chunk) // one chunk per column: always small
		got, truncated, err := rd.collect(table, f, cols, maxRelatedRows-len(rows))
		if err != nil {
			return nil, false, err
		}
		for _, r := range got {
			if id, ok := pluginsdk.Int(r["id"]); ok && !seen[id] {
				seen[id] = true
				rows = append(rows, r)
			}
		}
		if truncated || len(rows) >= maxRelatedRows {
			return rows, true, nil
		}
	}
	return rows, false, nil
}

func idsOf(rows []map[string]any) []int64 {
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		if id, ok := pluginsdk.Int(r["id"]); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

func tableLabel(t *pluginsdk.CatalogTable) string {
	if t.Label == "" {
		return t.Name
	}
	return t.Label
}

// datings are rows' chronology bounds.
type datings []chrono.Interval

func intervals(rows []map[string]any) datings {
	out := make(datings, len(rows))
	for i, r := range rows {
		out[i] = chrono.Interval{From: intPtr(r[colFrom]), To: intPtr(r[colTo])}
	}
	return out
}

// density is the 60-bin histogram, on a fixed axis when from and to are given.
func (d datings) density(from, to *int) chrono.Density {
	if from != nil && to != nil {
		return chrono.HistogramIn(d, chrono.DefaultBins, *from, *to)
	}
	return chrono.Histogram(d, chrono.DefaultBins)
}

func intPtr(v any) *int {
	n, ok := pluginsdk.Int(v)
	if !ok {
		return nil
	}
	y := int(n)
	return &y
}
