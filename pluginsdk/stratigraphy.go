package pluginsdk

import (
	"context"
	"fmt"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// StratigraphyInput selects a table's stratigraphy for Host.Stratigraphy.
type StratigraphyInput struct {
	App   string
	Table string // a table whose stratigraphic relations are on ("rs")
	// Filter is a filter object of the filter language narrowing the
	// units (any value that encodes to a JSON object); nil: every unit
	// the actor may read. Relations come back only between units that
	// are both in the answer.
	Filter any
	// Actor whose rights apply (level, per-table override, row subset):
	// pass the call's actor. nil reads as the plugin itself (every unit).
	Actor *Actor
}

// Stratigraphy is a table's matrix as the actor sees it.
type Stratigraphy struct {
	// HasChronology says the chronology feature is active on the table:
	// the units then carry its dating (ChronoFrom, ChronoTo, ChronoLabel).
	HasChronology bool
	Units         []StratUnit     // in id order; a unit without relations too
	Relations     []StratRelation // in id order; only between two Units
}

// StratUnit is one stratigraphic unit (a record of the table).
type StratUnit struct {
	ID    int64
	Label string // the record's label: its value of the table's id_field (the id when none)
	// ChronoFrom and ChronoTo are the chronology feature's dating in
	// signed years (negative BCE); nil when unset or without chronology.
	ChronoFrom, ChronoTo *int64
	ChronoLabel          string
}

// StratRelation is one recorded relation between two units: First
// <Relation> Second, Relation being the code (1 is covered by, 2 is cut
// by, 3 carries, 4 is filled by, 5 covers, 6 cuts, 7 leans against, 8
// fills, 9 is the same as, 10 is bound to). Each pair is stored once, in
// either direction; Order says what it means for the sequence, so a
// plugin need not know the codes.
type StratRelation struct {
	ID            int64
	First, Second int64
	Relation      int
	Order         string // OrderAbove, OrderBelow or OrderSame: First's place relative to Second
}

// The orders of a StratRelation.
const (
	OrderAbove = "above" // First lies above Second (is later): covers, cuts, leans against, fills
	OrderBelow = "below" // First lies below Second (is earlier): is covered by, is cut by, carries, is filled by
	OrderSame  = "same"  // one unit, or contemporary: is the same as, is bound to
)

// RelationOrder is the order of relation code r (OrderAbove, OrderBelow,
// OrderSame), or "" for a code that is not one.
func RelationOrder(r int) string {
	switch {
	case r >= 1 && r <= 4:
		return OrderBelow
	case r >= 5 && r <= 8:
		return OrderAbove
	case r == 9 || r == 10:
		return OrderSame
	}
	return ""
}

// MaxFeatureRecords is the most records one Host.FeatureRows call names.
const MaxFeatureRecords = 10000

// FeatureRowsInput names records whose feature rows Host.FeatureRows reads.
type FeatureRowsInput struct {
	App   string
	Table string // the parent table, e.g. "finds"
	// Feature is a feature with a child table active on Table, e.g.
	// "radiocarbon" (rows of finds_radiocarbon).
	Feature string
	// RecordIDs are the parent records, at most MaxFeatureRecords (the
	// server refuses more: InvalidArgument, reason too_many_records,
	// which WriteHostError answers 400): split a longer list.
	RecordIDs []int64
	// Actor whose rights apply: rows of records the actor may not read
	// (level, override, row subset of the parent table) never come back.
	// nil reads as the plugin itself.
	Actor *Actor
}

// FeatureRowsResult is what Host.FeatureRows answers.
type FeatureRowsResult struct {
	ChildTable string // the feature's child table, e.g. "finds_radiocarbon"
	// Rows are the child rows by parent record id, each row with its
	// "id", "id_link" (the parent) and the columns, in id order. A record
	// without rows, or one the actor may not read, has no entry.
	Rows map[int64][]map[string]any
}

func (h *hostClient) Stratigraphy(ctx context.Context, in StratigraphyInput) (*Stratigraphy, error) {
	c, err := h.get()
	if err != nil {
		return nil, err
	}
	filter, err := optionalJSON(in.Filter)
	if err != nil {
		return nil, fmt.Errorf("stratigraphy: filter: %w", err)
	}
	resp, err := c.Stratigraphy(ctx, &pluginv1.StratigraphyRequest{App: in.App, Table: in.Table, Filter: filter,
		Actor: actorToProto(in.Actor)})
	if err != nil {
		return nil, fmt.Errorf("stratigraphy: %w", err)
	}
	return stratigraphyFromProto(resp), nil
}

// stratigraphyFromProto converts the wire answer.
func stratigraphyFromProto(resp *pluginv1.StratigraphyResponse) *Stratigraphy {
	out := &Stratigraphy{HasChronology: resp.GetHasChronology(),
		Units:     make([]StratUnit, len(resp.GetUnits())),
		Relations: make([]StratRelation, len(resp.GetRelations()))}
	for i, u := range resp.GetUnits() {
		out.Units[i] = StratUnit{ID: u.GetId(), Label: u.GetLabel(), ChronoLabel: u.GetChronoLabel()}
		if u.ChronoFrom != nil {
			v := u.GetChronoFrom()
			out.Units[i].ChronoFrom = &v
		}
		if u.ChronoTo != nil {
			v := u.GetChronoTo()
			out.Units[i].ChronoTo = &v
		}
	}
	for i, r := range resp.GetRelations() {
		out.Relations[i] = StratRelation{ID: r.GetId(), First: r.GetFirst(), Second: r.GetSecond(),
			Relation: int(r.GetRelation()), Order: r.GetOrder()}
	}
	return out
}

func (h *hostClient) FeatureRows(ctx context.Context, in FeatureRowsInput) (*FeatureRowsResult, error) {
	c, err := h.get()
	if err != nil {
		return nil, err
	}
	resp, err := c.FeatureRows(ctx, &pluginv1.FeatureRowsRequest{App: in.App, Table: in.Table, Feature: in.Feature,
		RecordIds: in.RecordIDs, Actor: actorToProto(in.Actor)})
	if err != nil {
		return nil, fmt.Errorf("feature rows: %w", err)
	}
	rows, err := decodeRows(resp.GetRows())
	if err != nil {
		return nil, fmt.Errorf("feature rows: %w", err)
	}
	out := &FeatureRowsResult{ChildTable: resp.GetChildTable(), Rows: map[int64][]map[string]any{}}
	for _, r := range rows {
		parent, ok := Int(r["id_link"])
		if !ok {
			return nil, fmt.Errorf("feature rows: a row without its parent record (id_link): %v", r["id"])
		}
		out.Rows[parent] = append(out.Rows[parent], r)
	}
	return out, nil
}
