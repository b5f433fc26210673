package main

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/plugins/chronology/chrono"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// parseRoute serves GET /chrono/parse?q=c4l+BCE → {from, to, kind}, with
// null for an open or unknown bound.
func parseRoute(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		pluginsdk.WriteError(w, http.StatusBadRequest, "parameter_missing", "q is required, e.g. ?q=c4l+BCE or ?q=c1+CE/c2+CE")
		return
	}
	d, err := chrono.Parse(q)
	if err != nil {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_label", err.Error())
		return
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{
		"status": "success", "label": q, "from": d.From, "to": d.To, "kind": d.Kind,
	})
}

// maxTimelineRecords caps one timeline answer (about 100 bytes a record);
// beyond it the answer says truncated and gives the total.
const maxTimelineRecords = 10000

// timelineEntry is one record on the timeline.
type timelineEntry struct {
	Table     string `json:"tb"`
	ID        int64  `json:"id"`
	Label     string `json:"label"` // the table's id_field, or the id
	From      *int64 `json:"from"`  // null: ante quem
	To        *int64 `json:"to"`    // null: post quem
	LabelText any    `json:"label_text"`
	Certainty any    `json:"certainty"`
	period    any    // only in the BraDypUS grouping (tables)
}

// timelineRoute serves GET /chrono/timeline?from=&to=&tb[]=: the records
// with chronology of the chosen tables (default: every table where the
// feature is active) that may fall in the window, on one axis, as the
// caller may see them. from and to are years or tokens ("c4 BCE": from its
// first year, to its last); either may be left out. Records are ordered by
// from (ante quem first), to, table and id.
func (p *plugin) timelineRoute(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	from, ok := yearParam(w, q, "from", true)
	if !ok {
		return
	}
	to, ok := yearParam(w, q, "to", false)
	if !ok {
		return
	}
	if from != nil && to != nil && *from > *to {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_parameter", "from is after to")
		return
	}
	host, err := p.hostOf()
	if err != nil {
		writeHostError(w, err)
		return
	}
	actor := pluginsdk.ActorFrom(r)
	cat, err := host.Catalog(r.Context(), actor.App)
	if err != nil {
		writeHostError(w, err)
		return
	}
	names := listParam(q, "tb")
	explicit := len(names) > 0
	if !explicit {
		for _, t := range cat.Tables {
			if t.Features[feature] {
				names = append(names, t.Name)
			}
		}
	}
	var tables []*pluginsdk.CatalogTable
	inactive := []string{}
	for _, name := range names {
		t, ok := cat.Table(name)
		switch {
		case !ok:
			pluginsdk.WriteError(w, http.StatusNotFound, "table_not_found", fmt.Sprintf("no table %q", name))
			return
		case !t.Features[feature]:
			// BraDypUS's client opens the timeline of any table and
			// BraDypUS skips a table without fuzzy_date, answering
			// success; so does this route (CONTRACT §9/§10), saying why
			// in reason, message and inactive (once per table).
			if !slices.Contains(inactive, name) {
				inactive = append(inactive, name)
			}
			continue
		}
		tables = append(tables, t)
	}

	filter := windowFilter(from, to)
	records := []timelineEntry{}
	var total int64
	for _, t := range tables {
		limit := max(maxTimelineRecords-len(records), 1) // 1: only the total is needed
		cols := []string{colFrom, colTo, colLabel, colCertainty, colPeriod}
		if t.IDField != "" && t.IDField != "id" {
			cols = append(cols, t.IDField)
		}
		rows, n, err := host.QueryRecords(r.Context(), pluginsdk.QueryRecordsInput{
			App: actor.App, Table: t.Name, Filter: filter, Columns: cols, Limit: limit, Actor: &actor,
		})
		if err != nil {
			// Every chronology table by default: one the caller may not
			// read is left out, not an error.
			if !explicit && hiddenTable(err) {
				continue
			}
			writeHostError(w, err)
			return
		}
		total += n
		for _, row := range rows {
			if len(records) == maxTimelineRecords {
				break
			}
			id, _ := pluginsdk.Int(row["id"])
			records = append(records, timelineEntry{
				Table: t.Name, ID: id, Label: recordLabel(row, t.IDField, id),
				From: intOrNil(row[colFrom]), To: intOrNil(row[colTo]),
				LabelText: row[colLabel], Certainty: intOrValue(row[colCertainty]),
				period: row[colPeriod],
			})
		}
	}
	slices.SortStableFunc(records, func(a, b timelineEntry) int {
		return cmp.Or(cmpBound(a.From, b.From), cmpBound(a.To, b.To), cmp.Compare(a.Table, b.Table), cmp.Compare(a.ID, b.ID))
	})
	out := map[string]any{
		"status": "success", "from": from, "to": to, "records": records,
		"total": total, "truncated": total > int64(len(records)),
		"tables": byTable(records, tables),
	}
	if len(inactive) > 0 {
		out["reason"] = "feature_not_active"
		out["message"] = fmt.Sprintf("chronology is not active on %s", strings.Join(inactive, ", "))
		out["inactive"] = inactive
	}
	pluginsdk.WriteJSON(w, http.StatusOK, out)
}

// bradypusRecord is a timeline record as BraDypUS's client reads it.
type bradypusRecord struct {
	ID          int64  `json:"id"`
	Label       string `json:"label"`
	From        *int64 `json:"from"`
	To          *int64 `json:"to"`
	ChronoLabel any    `json:"chrono_label"`
	Certainty   any    `json:"certainty"`
	Period      any    `json:"period"`
}

// byTable groups the timeline's records as BraDypUS answers its timeline,
// {tb_id, tb_label, records}, which its client reads (tables with no
// record in the window are left out, as there), in the tables' order.
func byTable(records []timelineEntry, tables []*pluginsdk.CatalogTable) []map[string]any {
	groups := map[string][]bradypusRecord{}
	for _, r := range records {
		groups[r.Table] = append(groups[r.Table], bradypusRecord{
			ID: r.ID, Label: r.Label, From: r.From, To: r.To,
			ChronoLabel: r.LabelText, Certainty: r.Certainty, Period: r.period,
		})
	}
	out := []map[string]any{}
	for _, t := range tables {
		if g := groups[t.Name]; len(g) > 0 {
			out = append(out, map[string]any{"tb_id": t.Name, "tb_label": cmp.Or(t.Label, t.Name), "records": g})
			delete(groups, t.Name) // a table named twice is listed once
		}
	}
	return out
}

// cmpBound orders bounds with null (open downwards) first.
func cmpBound(a, b *int64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Compare(*a, *b)
}

// recordLabel is what a user calls the record: its id_field, else its id.
func recordLabel(row map[string]any, idField string, id int64) string {
	if v := row[idField]; idField != "" && v != nil {
		if s := strings.TrimSpace(fmt.Sprint(v)); s != "" {
			return s
		}
	}
	return fmt.Sprint(id)
}

func intOrNil(v any) *int64 {
	if n, ok := pluginsdk.Int(v); ok {
		return &n
	}
	return nil
}

// intOrValue gives a stored level as a number, anything else as stored.
func intOrValue(v any) any {
	if n, ok := pluginsdk.Int(v); ok {
		return n
	}
	return v
}

// yearParam reads an optional year parameter: a signed year or a token
// (first year for a start, last for an end). It writes the 400 itself.
func yearParam(w http.ResponseWriter, q url.Values, name string, start bool) (*int, bool) {
	s := strings.TrimSpace(q.Get(name))
	if s == "" {
		return nil, true
	}
	a, b, err := chrono.ParseToken(s)
	if err != nil {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_parameter", fmt.Sprintf("%s: %v", name, err))
		return nil, false
	}
	if start {
		return &a, true
	}
	return &b, true
}

// listParam reads a list parameter given as name[]=a&name[]=b, name=a,b or
// both; duplicates and blanks dropped, order kept.
func listParam(q url.Values, name string) []string {
	var out []string
	for _, v := range append(q[name+"[]"], q[name]...) {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// hiddenTable: the Host refused a table the caller may not read (or that
// went away since the catalog was read).
func hiddenTable(err error) bool {
	c := status.Code(err)
	return c == codes.PermissionDenied || c == codes.NotFound
}

// writeHostError answers a failed Host call (pluginsdk.WriteHostError)
// and logs what was the server's fault.
func writeHostError(w http.ResponseWriter, err error) {
	if unexpected := pluginsdk.WriteHostError(w, err); unexpected != nil {
		logf("host call failed: %v", unexpected)
	}
}
