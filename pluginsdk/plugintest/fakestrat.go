package plugintest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	"google.golang.org/grpc/codes"

	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// fakeStrat is a table's stratigraphy as a test set it.
type fakeStrat struct {
	s pluginsdk.Stratigraphy
}

// SetStratigraphy sets the matrix of table in app that Host.Stratigraphy
// answers, which also marks the table as keeping relations (a table
// never set is refused, InvalidArgument rs_not_enabled, as the server
// refuses a table without "rs"). A relation's Order may be left empty:
// the fake fills it from the code (pluginsdk.RelationOrder).
//
// As the server, the fake answers as the call's actor may see the table
// (SetRights: a denied table is PermissionDenied not_enough_privilege)
// and narrows the units by the call's filter: the row subset and the
// filter are matched (Match) against the unit's record seeded with
// SetRecords on the same table (by id), and a unit without a seeded
// record is left out whenever there is a subset or a filter. Relations
// come back only between two units left.
func (h *FakeHost) SetStratigraphy(app, table string, s pluginsdk.Stratigraphy) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.strat == nil {
		h.strat = map[string]map[string]*fakeStrat{}
	}
	if h.strat[app] == nil {
		h.strat[app] = map[string]*fakeStrat{}
	}
	c := pluginsdk.Stratigraphy{HasChronology: s.HasChronology, Units: slices.Clone(s.Units), Relations: slices.Clone(s.Relations)}
	for i, r := range c.Relations {
		if r.Order == "" {
			c.Relations[i].Order = pluginsdk.RelationOrder(r.Relation)
		}
	}
	h.strat[app][table] = &fakeStrat{s: c}
}

// Stratigraphy implements the Host service (see SetStratigraphy).
func (h *FakeHost) Stratigraphy(_ context.Context, req *pluginv1.StratigraphyRequest) (*pluginv1.StratigraphyResponse, error) {
	filter, err := decodeFilter(req.GetFilter())
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	subset, err := h.readGate(req.GetActor(), req.GetTable())
	if err != nil {
		return nil, err
	}
	fs := h.strat[req.GetApp()][req.GetTable()]
	if fs == nil {
		return nil, hostError(codes.InvalidArgument, "rs_not_enabled", "stratigraphic relations are not enabled on this table")
	}
	seeded := map[int64]map[string]any{}
	for _, r := range h.records[req.GetApp()][req.GetTable()] {
		if id, ok := pluginsdk.Int(r["id"]); ok {
			seeded[id] = r
		}
	}
	out := &pluginv1.StratigraphyResponse{HasChronology: fs.s.HasChronology}
	visible := map[int64]bool{}
	units := slices.Clone(fs.s.Units)
	sort.SliceStable(units, func(i, j int) bool { return units[i].ID < units[j].ID })
	for _, u := range units {
		if filter != nil || subset != nil {
			rec, ok := seeded[u.ID]
			if !ok {
				continue
			}
			for _, f := range []map[string]any{filter, subset} {
				if ok {
					if ok, err = Match(f, rec); err != nil {
						return nil, hostError(codes.InvalidArgument, "invalid_filter", "%v", err)
					}
				}
			}
			if !ok {
				continue
			}
		}
		visible[u.ID] = true
		pu := &pluginv1.StratUnit{Id: u.ID, Label: u.Label, ChronoLabel: u.ChronoLabel}
		if u.ChronoFrom != nil {
			v := *u.ChronoFrom
			pu.ChronoFrom = &v
		}
		if u.ChronoTo != nil {
			v := *u.ChronoTo
			pu.ChronoTo = &v
		}
		out.Units = append(out.Units, pu)
	}
	rels := slices.Clone(fs.s.Relations)
	sort.SliceStable(rels, func(i, j int) bool { return rels[i].ID < rels[j].ID })
	for _, r := range rels {
		if visible[r.First] && visible[r.Second] {
			out.Relations = append(out.Relations, &pluginv1.StratRelation{Id: r.ID, First: r.First, Second: r.Second,
				Relation: int32(r.Relation), Order: r.Order})
		}
	}
	return out, nil
}

// readGate is the server's gate on reading table for a call's actor: nil
// and no error for the plugin's own calls; PermissionDenied for an actor
// SetRights denies; else the actor's row subset (nil: every row). Called
// with h.mu held.
func (h *FakeHost) readGate(pa *pluginv1.Actor, table string) (map[string]any, error) {
	a := actorFromProto(pa)
	if a == nil || (a.UserID == 0 && a.APIKeyID == 0) {
		return nil, nil
	}
	level, subset := h.grant(*a, table, "")
	if !readable(level) {
		return nil, hostError(codes.PermissionDenied, "not_enough_privilege", "the actor may not read this table")
	}
	return subset, nil
}

// SetFeatureRows seeds the child rows of feature on table in app, for
// Host.FeatureRows: each row names its parent record in "id_link" (rows
// without an "id" get 1, 2, … in order). The rows are those of the child
// table <table>_<suffix> (the suffix of one of the plugin's own features
// in the manifest, else the feature's name, as for radiocarbon's
// <table>_radiocarbon), which QueryRecords reads too. It panics on a row
// without id_link or that does not encode to JSON (a test bug).
//
// FeatureRows then answers as the server: the parent table's gate
// (SetRights: a denied actor is PermissionDenied; with a row subset, only
// rows of parent records seeded with SetRecords that match it come back),
// the feature active on the table (SetFeatures; NotFound
// feature_not_active otherwise, or when no rows were ever set for a
// feature that is not the plugin's own), at most
// pluginsdk.MaxFeatureRecords records (InvalidArgument too_many_records).
func (h *FakeHost) SetFeatureRows(app, table, feature string, rows ...map[string]any) {
	child := h.childTableName(table, feature)
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		n, err := normalise(r)
		if err != nil {
			panic(fmt.Sprintf("plugintest: SetFeatureRows row %d: %v", i, err))
		}
		if _, ok := pluginsdk.Int(n["id_link"]); !ok {
			panic(fmt.Sprintf("plugintest: SetFeatureRows row %d has no id_link (its parent record)", i))
		}
		if _, ok := n["id"]; !ok {
			n["id"] = json.Number(fmt.Sprint(i + 1))
		}
		out[i] = n
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.records[app] == nil {
		h.records[app] = map[string][]map[string]any{}
	}
	h.records[app][child] = out
	if h.featureChild == nil {
		h.featureChild = map[string]string{}
	}
	h.featureChild[app+"\x00"+table+"\x00"+feature] = child
}

// childTableName is feature's child table on table.
func (h *FakeHost) childTableName(table, feature string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f := h.ownFeature(feature); f != nil && f.Child != nil {
		return table + "_" + f.Child.Suffix
	}
	return table + "_" + feature
}

// ownFeature is the plugin's own feature called name (nil when it has
// none or the manifest is unknown). Called with h.mu held.
func (h *FakeHost) ownFeature(name string) *pluginsdk.Feature {
	if h.manifest == nil {
		return nil
	}
	for i := range h.manifest.Features {
		if h.manifest.Features[i].Name == name {
			return &h.manifest.Features[i]
		}
	}
	return nil
}

// FeatureRows implements the Host service (see SetFeatureRows).
func (h *FakeHost) FeatureRows(_ context.Context, req *pluginv1.FeatureRowsRequest) (*pluginv1.FeatureRowsResponse, error) {
	if n := len(req.GetRecordIds()); n > pluginsdk.MaxFeatureRecords {
		return nil, hostError(codes.InvalidArgument, "too_many_records", "a call reads the rows of at most %d records (%d asked)", pluginsdk.MaxFeatureRecords, n)
	}
	if req.GetFeature() == "" {
		return nil, hostError(codes.InvalidArgument, "parameter_missing", "a feature is required")
	}
	want := map[int64]bool{}
	for _, id := range req.GetRecordIds() {
		if id <= 0 {
			return nil, hostError(codes.InvalidArgument, "invalid_parameter", "record ids are positive (%d)", id)
		}
		want[id] = true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	app, table, feature := req.GetApp(), req.GetTable(), req.GetFeature()
	subset, err := h.readGate(req.GetActor(), table)
	if err != nil {
		return nil, err
	}
	if active, set := h.features[app][table]; set && !slices.Contains(active, feature) {
		return nil, hostError(codes.NotFound, "feature_not_active", "the feature %s is not active on %s", feature, table)
	}
	child, ok := h.featureChild[app+"\x00"+table+"\x00"+feature]
	if !ok {
		own := h.ownFeature(feature)
		switch {
		case own == nil:
			return nil, hostError(codes.NotFound, "feature_not_active", "the feature %s is not active on %s", feature, table)
		case own.Child == nil:
			return nil, hostError(codes.InvalidArgument, "feature_has_no_rows", "the feature %s has no child table", feature)
		}
		child = table + "_" + own.Child.Suffix
	}
	if subset != nil {
		// Only parents seeded and within the subset.
		for id := range want {
			want[id] = false
		}
		for _, r := range h.records[app][table] {
			id, _ := pluginsdk.Int(r["id"])
			if _, asked := want[id]; !asked {
				continue
			}
			ok, err := Match(subset, r)
			if err != nil {
				return nil, hostError(codes.Internal, "host_error", "the row subset: %v", err)
			}
			want[id] = ok
		}
	}
	var rows []map[string]any
	for _, r := range h.records[app][child] {
		if parent, _ := pluginsdk.Int(r["id_link"]); want[parent] {
			rows = append(rows, maps.Clone(r))
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if c := compareValues(rows[i]["id_link"], rows[j]["id_link"]); c != 0 {
			return c < 0
		}
		return compareValues(rows[i]["id"], rows[j]["id"]) < 0
	})
	b, err := encodeRows(rows)
	if err != nil {
		return nil, hostError(codes.Internal, "host_error", "%v", err)
	}
	return &pluginv1.FeatureRowsResponse{ChildTable: child, Rows: b}, nil
}
