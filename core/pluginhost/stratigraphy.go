package pluginhost

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Bounds of Stratigraphy and FeatureRows: one answer is one gRPC message
// (pluginsdk.MaxMessageSize, 40 MiB), and the server builds it in memory.
// A plugin narrows a larger matrix with the filter, and splits its
// records into several FeatureRows calls.
const (
	maxStratUnits     = 100000
	maxStratRelations = 500000
	maxFeatureRows    = 100000
	// featureIDChunk is how many parent ids one read of child rows names
	// (bound parameters per statement).
	featureIDChunk = 500
)

var (
	errStratTooLarge = errs.New(errs.Invalid, "stratigraphy_too_large",
		fmt.Sprintf("the matrix is larger than one call answers (%d units, %d relations): narrow it with a filter", maxStratUnits, maxStratRelations))
	errTooManyRecords = errs.New(errs.Invalid, "too_many_records",
		fmt.Sprintf("a call reads the rows of at most %d records", pluginsdk.MaxFeatureRecords))
	errTooManyRows = errs.New(errs.Invalid, "too_many_rows",
		fmt.Sprintf("the records have more than %d rows: ask for fewer records at a time", maxFeatureRows))
	errFeatureRequired  = errs.New(errs.Invalid, "parameter_missing", "a feature is required")
	errBadRecordID      = errs.New(errs.Invalid, "invalid_parameter", "record ids are positive")
	errFeatureNotActive = errs.New(errs.NotFound, "feature_not_active", "the feature is not active on this table")
	errFeatureNoRows    = errs.New(errs.Invalid, "feature_has_no_rows", "the feature keeps no rows of its own (it has no child table): read its columns with QueryRecords")
)

// Stratigraphy answers a table's matrix as the actor sees it, through
// records.Matrix on the actor's scope (level, override, row subset: the
// gate of every request), narrowed by the plugin's filter.
func (h *hostServer) Stratigraphy(ctx context.Context, req *pluginv1.StratigraphyRequest) (*pluginv1.StratigraphyResponse, error) {
	resp, err := h.stratigraphy(ctx, req)
	if err != nil {
		return nil, h.hostError("Stratigraphy", err)
	}
	return resp, nil
}

func (h *hostServer) stratigraphy(ctx context.Context, req *pluginv1.StratigraphyRequest) (*pluginv1.StratigraphyResponse, error) {
	a, err := h.app(ctx, req.GetApp())
	if err != nil {
		return nil, err
	}
	full, err := h.m.catalogs.Get(ctx, a.Name, a.DB)
	if err != nil {
		return nil, err
	}
	cat := full.Visible()
	t, ok := cat.Table(req.GetTable())
	if !ok {
		return nil, schema.ErrTableNotFound.With("table", req.GetTable())
	}
	sc, opt, actor, err := h.scope(ctx, a, cat, t, req.GetActor())
	if err != nil {
		return nil, err
	}
	if !t.RS {
		return nil, records.ErrRSNotEnabled.With("table", t.Name)
	}
	node, err := filter.ParseJSON(req.GetFilter())
	if err != nil {
		return nil, err
	}
	if node != nil {
		sql, args, err := filter.RenderWith(WithActor(ctx, actor), a.DB, cat, t.Name, node, opt)
		if err != nil {
			return nil, err
		}
		// The filter narrows the actor's rows: Matrix reads the scope's
		// restriction (the row subset), so the filter joins it there, and
		// relations come back only between units both left.
		narrowed := *sc
		narrowed.Restrict = &records.Cond{SQL: sql, Args: args}
		if sc.Restrict != nil {
			narrowed.Restrict = &records.Cond{SQL: "(" + sc.Restrict.SQL + ") AND (" + sql + ")",
				Args: append(append([]any{}, sc.Restrict.Args...), args...)}
		}
		sc = &narrowed
	}
	// Counted first: Matrix reads every unit at once.
	count, err := records.List(ctx, sc, records.ListQuery{IDsOnly: true, Page: 1, PerPage: 1})
	if err != nil {
		return nil, err
	}
	if count.Total > maxStratUnits {
		return nil, errStratTooLarge.With("units", count.Total)
	}
	m, err := records.Matrix(ctx, sc)
	if err != nil {
		return nil, err
	}
	return matrixProto(m)
}

// matrixProto converts records.Matrix's answer (the shape of
// GET /rs/matrix) to the wire's.
func matrixProto(m map[string]any) (*pluginv1.StratigraphyResponse, error) {
	nodes, _ := m["nodes"].([]map[string]any)
	rels, _ := m["relations"].([]map[string]any)
	if len(rels) > maxStratRelations {
		return nil, errStratTooLarge.With("relations", len(rels))
	}
	hasChrono, _ := m["has_chronology"].(bool)
	out := &pluginv1.StratigraphyResponse{HasChronology: hasChrono,
		Units: make([]*pluginv1.StratUnit, 0, len(nodes)), Relations: make([]*pluginv1.StratRelation, 0, len(rels))}
	for _, n := range nodes {
		u := &pluginv1.StratUnit{Id: int64Of(n["id"]), Label: textOf(n["label"])}
		if v, ok := yearOf(n["chrono_from"]); ok {
			u.ChronoFrom = &v
		}
		if v, ok := yearOf(n["chrono_to"]); ok {
			u.ChronoTo = &v
		}
		u.ChronoLabel = textOf(n["chrono_label"])
		out.Units = append(out.Units, u)
	}
	for _, r := range rels {
		code := int(int64Of(r["relation"]))
		out.Relations = append(out.Relations, &pluginv1.StratRelation{Id: int64Of(r["id"]), First: int64Of(r["first"]),
			Second: int64Of(r["second"]), Relation: int32(code), Order: pluginsdk.RelationOrder(code)})
	}
	return out, nil
}

func int64Of(v any) int64 {
	n, _ := yearOf(v)
	return n
}

// yearOf reads an integer column's value as records gives it; false for
// null (or a value that is not a whole number, which an int column never
// holds).
func yearOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
			return n, true
		}
	}
	return 0, false
}

func textOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// FeatureRows reads a feature's child rows attached to records, through
// the actor's scope on the child table: a feature's child table is never
// more open than its parent (records.Grants), and its rows are restricted
// to the parent records the actor may read, so rows of hidden records
// never come back.
func (h *hostServer) FeatureRows(ctx context.Context, req *pluginv1.FeatureRowsRequest) (*pluginv1.FeatureRowsResponse, error) {
	resp, err := h.featureRows(ctx, req)
	if err != nil {
		return nil, h.hostError("FeatureRows", err)
	}
	return resp, nil
}

func (h *hostServer) featureRows(ctx context.Context, req *pluginv1.FeatureRowsRequest) (*pluginv1.FeatureRowsResponse, error) {
	if n := len(req.GetRecordIds()); n > pluginsdk.MaxFeatureRecords {
		return nil, errTooManyRecords.With("records", n)
	}
	if req.GetFeature() == "" {
		return nil, errFeatureRequired.With("parameter", "feature")
	}
	seen := make(map[int64]bool, len(req.GetRecordIds()))
	ids := make([]int64, 0, len(req.GetRecordIds()))
	for _, id := range req.GetRecordIds() {
		if id <= 0 {
			return nil, errBadRecordID.With("id", id)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	a, err := h.app(ctx, req.GetApp())
	if err != nil {
		return nil, err
	}
	full, err := h.m.catalogs.Get(ctx, a.Name, a.DB)
	if err != nil {
		return nil, err
	}
	cat := full.Visible()
	t, ok := cat.Table(req.GetTable())
	if !ok || t.IsPlugin {
		return nil, schema.ErrTableNotFound.With("table", req.GetTable())
	}
	// The gate on the parent first: an actor denied the parent table is
	// refused as such, whatever the feature.
	if _, _, _, err := h.scope(ctx, a, cat, t, req.GetActor()); err != nil {
		return nil, err
	}
	st, ok := t.Features[req.GetFeature()]
	if !ok || !st.Active {
		return nil, errFeatureNotActive.With("feature", req.GetFeature()).With("table", t.Name)
	}
	if st.ChildTable == "" {
		return nil, errFeatureNoRows.With("feature", req.GetFeature())
	}
	ct, ok := cat.Table(st.ChildTable)
	if !ok {
		return nil, errFeatureNotActive.With("feature", req.GetFeature()).With("table", t.Name)
	}
	sc, _, _, err := h.scope(ctx, a, cat, ct, req.GetActor())
	if err != nil {
		return nil, err
	}
	cols := []string{schema.ColIDLink}
	for _, f := range ct.Fields {
		cols = append(cols, f.Name)
	}
	rows := []map[string]any{}
	link := a.DB.Qualify(ct.Name) + "." + a.DB.Engine.Quote(schema.ColIDLink)
	for len(ids) > 0 {
		chunk := ids[:min(featureIDChunk, len(ids))]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		where := &records.Cond{SQL: link + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ") + ")", Args: args}
		q := records.ListQuery{Columns: cols, Where: where, SortField: schema.ColIDLink, NoTotal: true,
			Page: 1, PerPage: records.MaxPerPage}
		for {
			res, err := records.List(ctx, sc, q)
			if err != nil {
				return nil, err
			}
			rows = append(rows, res.Data...)
			if len(rows) > maxFeatureRows {
				return nil, errTooManyRows
			}
			if len(res.Data) < q.PerPage {
				break
			}
			q.Page++
		}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return nil, err
	}
	return &pluginv1.FeatureRowsResponse{ChildTable: ct.Name, Rows: b}, nil
}
