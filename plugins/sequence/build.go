package main

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/plugins/sequence/model"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// Bounds of a built model.
const (
	// maxOrders bounds the ordering constraints of a model (after the
	// reduction: what remains is the matrix's own structure).
	maxOrders = 50000
	// maxPhases bounds the phases of a model.
	maxPhases = 200
	// maxWarnings bounds the warnings of a preview (one more says how
	// many were left out).
	maxWarnings = 50
)

// radiocarbonFeature is the radiocarbon plugin's feature, whose child
// rows (lab_code, bp, bp_error, curve) are the dates.
const radiocarbonFeature = "radiocarbon"

// previewDate is one date of a built model, as the preview answers it and
// a run stores it: the radiocarbon row (ID), its record and the model's
// name for it (Name: the date's name in the result and the exports).
type previewDate struct {
	ID        int64   `json:"id"`
	RecordID  int64   `json:"record_id"`
	UnitLabel string  `json:"unit_label"`
	LabCode   string  `json:"lab_code"`
	Name      string  `json:"name"`
	BP        float64 `json:"bp"`
	Error     float64 `json:"error"`
	Curve     string  `json:"curve"`
	Phase     *string `json:"phase"`
}

// built is a model as built now from the table, as one actor sees it.
type built struct {
	Model    model.Model
	Dates    []previewDate
	Phases   []string
	Warnings []string
}

// buildError is a model that cannot be built: answered with its status,
// code and, for a cycle, the path of unit labels.
type buildError struct {
	status int
	code   string
	msg    string
	path   []string
}

func (e *buildError) Error() string { return e.msg }

// warnings collects a bounded list of warnings.
type warnings struct {
	list []string
	more int
}

func (w *warnings) add(format string, args ...any) {
	if len(w.list) >= maxWarnings {
		w.more++
		return
	}
	w.list = append(w.list, fmt.Sprintf(format, args...))
}

func (w *warnings) done() []string {
	if w.more > 0 {
		return append(w.list, fmt.Sprintf("%d more warnings left out", w.more))
	}
	if w.list == nil {
		return []string{}
	}
	return w.list
}

// matrix is the stratigraphy reduced to "same as" classes and the order
// between them: an edge a → b says class a lies below (is older than) b.
type matrix struct {
	units   []pluginsdk.StratUnit
	unitIdx map[int64]int // unit id → index in units
	class   []int         // unit index → class
	members [][]int       // class → unit indexes, in id order
	younger [][]int       // class → classes directly above it
}

func (m *matrix) label(class int) string { return m.units[m.members[class][0]].Label }

// newMatrix builds the classes and their order, refusing a cycle with
// its path.
func newMatrix(s *pluginsdk.Stratigraphy) (*matrix, error) {
	m := &matrix{units: s.Units, unitIdx: make(map[int64]int, len(s.Units))}
	for i, u := range s.Units {
		m.unitIdx[u.ID] = i
	}
	parent := make([]int, len(s.Units))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, r := range s.Relations {
		a, okA := m.unitIdx[r.First]
		b, okB := m.unitIdx[r.Second]
		if okA && okB && r.Order == pluginsdk.OrderSame {
			ra, rb := find(a), find(b)
			if ra != rb {
				parent[max(ra, rb)] = min(ra, rb)
			}
		}
	}
	root := map[int]int{}
	m.class = make([]int, len(s.Units))
	for i := range s.Units {
		r := find(i)
		c, ok := root[r]
		if !ok {
			c = len(m.members)
			root[r] = c
			m.members = append(m.members, nil)
		}
		m.class[i] = c
		m.members[c] = append(m.members[c], i)
	}
	m.younger = make([][]int, len(m.members))
	for _, r := range s.Relations {
		a, okA := m.unitIdx[r.First]
		b, okB := m.unitIdx[r.Second]
		if !okA || !okB {
			continue
		}
		var older, younger int
		switch r.Order {
		case pluginsdk.OrderAbove:
			older, younger = b, a
		case pluginsdk.OrderBelow:
			older, younger = a, b
		default:
			continue
		}
		co, cy := m.class[older], m.class[younger]
		if co == cy {
			return nil, &buildError{status: http.StatusConflict, code: "sequence_cycle",
				msg:  fmt.Sprintf("the matrix puts %s below %s, which are the same unit or contemporary", s.Units[older].Label, s.Units[younger].Label),
				path: []string{s.Units[older].Label, s.Units[younger].Label, s.Units[older].Label}}
		}
		if !slices.Contains(m.younger[co], cy) {
			m.younger[co] = append(m.younger[co], cy)
		}
	}
	if path := m.cycle(); path != nil {
		return nil, &buildError{status: http.StatusConflict, code: "sequence_cycle",
			msg: "the matrix has a cycle: " + strings.Join(path, " → "), path: path}
	}
	return m, nil
}

// cycle finds a cycle of the class graph (iteratively: a matrix may be
// deep) and returns its unit labels, first repeated last; nil when there
// is none.
func (m *matrix) cycle() []string {
	const white, grey, black = 0, 1, 2
	colour := make([]int, len(m.members))
	type frame struct{ c, next int }
	for start := range m.members {
		if colour[start] != white {
			continue
		}
		stack := []frame{{start, 0}}
		colour[start] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(m.younger[top.c]) {
				colour[top.c] = black
				stack = stack[:len(stack)-1]
				continue
			}
			n := m.younger[top.c][top.next]
			top.next++
			switch colour[n] {
			case white:
				colour[n] = grey
				stack = append(stack, frame{n, 0})
			case grey:
				var path []string
				on := false
				for _, f := range stack {
					if f.c == n {
						on = true
					}
					if on {
						path = append(path, m.label(f.c))
					}
				}
				return append(path, m.label(n))
			}
		}
	}
	return nil
}

// reach marks every class above (younger than) the classes from, not
// counting from themselves unless a path returns to them (it cannot: the
// graph is acyclic).
func (m *matrix) reach(from []int) []bool {
	seen := make([]bool, len(m.members))
	stack := slices.Clone(from)
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, n := range m.younger[c] {
			if !seen[n] {
				seen[n] = true
				stack = append(stack, n)
			}
		}
	}
	return seen
}

// build makes the model of s from the table as actor sees it.
func (p *plugin) build(ctx context.Context, h pluginsdk.Host, actor pluginsdk.Actor, s stored) (*built, error) {
	strat, err := h.Stratigraphy(ctx, pluginsdk.StratigraphyInput{App: actor.App, Table: s.Table, Filter: s.Def.Filter, Actor: &actor})
	if err != nil {
		return nil, err
	}
	mx, err := newMatrix(strat)
	if err != nil {
		return nil, err
	}
	var warn warnings

	// The phase of each unit (by unit index), and the phases' order keys.
	phaseOf := make([]string, len(strat.Units))
	switch s.Def.Phases.By {
	case byChronology:
		if !strat.HasChronology {
			return nil, &buildError{status: http.StatusBadRequest, code: "chronology_not_active",
				msg: "phases by chronology need the chronology feature on table " + s.Table}
		}
		for i, u := range strat.Units {
			label := strings.TrimSpace(u.ChronoLabel)
			if label != "" && u.ChronoFrom == nil && u.ChronoTo == nil {
				warn.add("unit %s: period %q has no years, so it is in no phase", u.Label, label)
				label = ""
			}
			phaseOf[i] = label
		}
	case byField:
		if err := fieldPhases(ctx, h, actor, s, strat, phaseOf); err != nil {
			return nil, err
		}
	}

	// The dates.
	unitIDs := make([]int64, len(strat.Units))
	for i, u := range strat.Units {
		unitIDs[i] = u.ID
	}
	var dates []previewDate
	var dateUnit []int // date → unit index
	for chunk := range slices.Chunk(unitIDs, pluginsdk.MaxFeatureRecords) {
		res, err := h.FeatureRows(ctx, pluginsdk.FeatureRowsInput{App: actor.App, Table: s.Table, Feature: radiocarbonFeature,
			RecordIDs: chunk, Actor: &actor})
		if err != nil {
			return nil, err
		}
		for _, id := range chunk {
			ui := mx.unitIdx[id]
			for _, r := range res.Rows[id] {
				bp, ok1 := pluginsdk.Float(r["bp"])
				e, ok2 := pluginsdk.Float(r["bp_error"])
				lab := strings.TrimSpace(str(r["lab_code"]))
				if !ok1 || !ok2 || e <= 0 {
					warn.add("unit %s: date %s has no age or error, left out", strat.Units[ui].Label, cmp.Or(lab, "#"+fmt.Sprint(num(r["id"]))))
					continue
				}
				curve := strings.ToLower(strings.TrimSpace(str(r["curve"])))
				if curve == "" {
					curve = "intcal20"
				}
				d := previewDate{ID: num(r["id"]), RecordID: id, UnitLabel: strat.Units[ui].Label, LabCode: lab, BP: bp, Error: e, Curve: curve}
				if ph := phaseOf[ui]; ph != "" {
					d.Phase = &ph
				}
				dates = append(dates, d)
				dateUnit = append(dateUnit, ui)
			}
		}
	}
	if len(dates) > model.MaxParams {
		return nil, &buildError{status: http.StatusBadRequest, code: "sequence_too_large",
			msg: fmt.Sprintf("%d dates; a model takes at most %d", len(dates), model.MaxParams)}
	}
	nameDates(dates)

	// The phases, oldest first: those holding dates.
	phases, err := orderPhases(mx, strat, phaseOf, s.Def.Phases.By)
	if err != nil {
		return nil, err
	}
	phaseIdx := map[string]int{}
	members := map[string][]string{}
	for _, d := range dates {
		if d.Phase != nil {
			members[*d.Phase] = append(members[*d.Phase], strconv.FormatInt(d.ID, 10))
		}
	}
	var modelPhases []model.Phase
	var names []string
	for _, ph := range phases {
		if len(members[ph]) == 0 {
			warn.add("phase %q has no dates, left out of the model", ph)
			continue
		}
		phaseIdx[ph] = len(names)
		names = append(names, ph)
		modelPhases = append(modelPhases, model.Phase{Name: ph, Dates: members[ph]})
	}
	if len(names) > maxPhases {
		return nil, &buildError{status: http.StatusBadRequest, code: "sequence_too_large",
			msg: fmt.Sprintf("%d phases; a model takes at most %d", len(names), maxPhases)}
	}
	if s.Def.Phases.By != byNone {
		for _, d := range dates {
			if d.Phase == nil {
				warn.add("date %s (unit %s) is in no phase", d.Name, d.UnitLabel)
			}
		}
	}

	orders, err := dateOrders(mx, dates, dateUnit, phaseIdx)
	if err != nil {
		return nil, err
	}
	m := model.Model{Name: s.Name, Orders: orders, Phases: modelPhases, Boundaries: model.BoundaryMode(s.Def.Boundaries), Range: s.Def.Range}
	for _, d := range dates {
		m.Dates = append(m.Dates, model.Date{ID: strconv.FormatInt(d.ID, 10), Label: d.Name, BP: d.BP, Error: d.Error, Curve: d.Curve})
	}
	if names == nil {
		names = []string{}
	}
	if dates == nil {
		dates = []previewDate{}
	}
	return &built{Model: m, Dates: dates, Phases: names, Warnings: warn.done()}, nil
}

// nameDates names each date by its lab code, or, when it has none or
// shares it, by its unit and row id: names are unique (OxCal matches
// results by name).
func nameDates(dates []previewDate) {
	count := map[string]int{}
	for _, d := range dates {
		count[d.LabCode]++
	}
	for i, d := range dates {
		if d.LabCode != "" && count[d.LabCode] == 1 {
			dates[i].Name = d.LabCode
		} else {
			dates[i].Name = fmt.Sprintf("%s #%d", d.UnitLabel, d.ID)
		}
	}
}

// fieldPhases reads each unit's value of the grouping field as actor.
func fieldPhases(ctx context.Context, h pluginsdk.Host, actor pluginsdk.Actor, s stored, strat *pluginsdk.Stratigraphy, phaseOf []string) error {
	idx := make(map[int64]int, len(strat.Units))
	ids := make([]int64, len(strat.Units))
	for i, u := range strat.Units {
		idx[u.ID] = i
		ids[i] = u.ID
	}
	const page = 1000 // ids per query: the filter stays small
	for chunk := range slices.Chunk(ids, page) {
		rows, _, err := h.QueryRecords(ctx, pluginsdk.QueryRecordsInput{App: actor.App, Table: s.Table,
			Filter:  map[string]any{"id": map[string]any{"_in": chunk}},
			Columns: []string{"id", s.Def.Phases.Field}, Limit: page, Actor: &actor})
		if err != nil {
			return err
		}
		for _, r := range rows {
			i, ok := idx[num(r["id"])]
			if !ok {
				continue
			}
			switch v := r[s.Def.Phases.Field].(type) {
			case nil:
			case string:
				phaseOf[i] = strings.TrimSpace(v)
			default:
				phaseOf[i] = strings.TrimSpace(fmt.Sprint(v))
			}
		}
	}
	return nil
}

// orderPhases orders the phases oldest first and checks that the matrix
// agrees: by chronology, by the periods' years (chrono_from, else
// chrono_to); by a field, by the matrix itself (a phase some of whose
// units lie below units of another is older). A matrix that puts units of
// two phases both below and above each other, or (by chronology) a
// later period's unit below an earlier one's, is refused: 409
// sequence_phase_order, naming the units.
func orderPhases(mx *matrix, strat *pluginsdk.Stratigraphy, phaseOf []string, by string) ([]string, error) {
	classes := map[string][]int{}
	var names []string
	key := map[string]int64{}
	for i, ph := range phaseOf {
		if ph == "" {
			continue
		}
		if _, ok := classes[ph]; !ok {
			names = append(names, ph)
		}
		classes[ph] = append(classes[ph], mx.class[i])
		u := strat.Units[i]
		var k *int64
		if u.ChronoFrom != nil {
			k = u.ChronoFrom
		} else {
			k = u.ChronoTo
		}
		if k != nil {
			if old, ok := key[ph]; !ok || *k < old {
				key[ph] = *k
			}
		}
	}
	if len(names) > maxPhases {
		return nil, &buildError{status: http.StatusBadRequest, code: "sequence_too_large",
			msg: fmt.Sprintf("%d phases; a model takes at most %d", len(names), maxPhases)}
	}
	// below[{p, q}]: a unit of p lies below unit below[{p, q}] of q.
	type pair struct{ p, q string }
	below := map[pair]int{}
	for _, p := range names {
		seen := mx.reach(classes[p])
		for i, q := range phaseOf {
			if q == "" || q == p {
				continue
			}
			if _, ok := below[pair{p, q}]; !ok && seen[mx.class[i]] {
				below[pair{p, q}] = i
			}
		}
	}
	// witness names the units of a pair: a unit of p below the one of q
	// found (searched only for an error's message).
	witness := func(pq pair) [2]string {
		i := below[pq]
		for _, c0 := range classes[pq.p] {
			if mx.reach([]int{c0})[mx.class[i]] {
				return [2]string{mx.label(c0), strat.Units[i].Label}
			}
		}
		return [2]string{pq.p, strat.Units[i].Label}
	}
	conflict := func(p, q string) error {
		a, b := witness(pair{p, q}), witness(pair{q, p})
		return &buildError{status: http.StatusConflict, code: "sequence_phase_order",
			msg: fmt.Sprintf("the matrix does not order phases %q and %q: %s (%s) lies below %s (%s), and %s (%s) below %s (%s)",
				p, q, a[0], p, a[1], q, b[0], q, b[1], p)}
	}
	for _, p := range names {
		for _, q := range names {
			if p < q {
				if _, pq := below[pair{p, q}]; pq {
					if _, qp := below[pair{q, p}]; qp {
						return nil, conflict(p, q)
					}
				}
			}
		}
	}
	if by == byChronology {
		slices.SortStableFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(key[a], key[b]), strings.Compare(a, b)) })
		for i, p := range names {
			for _, q := range names[:i] {
				if _, ok := below[pair{p, q}]; ok {
					w := witness(pair{p, q})
					return nil, &buildError{status: http.StatusConflict, code: "sequence_phase_order",
						msg: fmt.Sprintf("the matrix puts %s (%s) below %s (%s), though %q is the later period", w[0], p, w[1], q, p)}
				}
			}
		}
		return names, nil
	}
	// By the matrix: a topological order, the oldest available first, by
	// name among phases the matrix does not order.
	slices.Sort(names)
	placed := map[string]bool{}
	var out []string
	for len(out) < len(names) {
		next := ""
		for _, q := range names {
			if placed[q] {
				continue
			}
			ready := true
			for _, p := range names {
				if !placed[p] && p != q {
					if _, ok := below[pair{p, q}]; ok {
						ready = false
						break
					}
				}
			}
			if ready {
				next = q
				break
			}
		}
		if next == "" {
			var left []string
			for _, q := range names {
				if !placed[q] {
					left = append(left, strconv.Quote(q))
				}
			}
			return nil, &buildError{status: http.StatusConflict, code: "sequence_phase_order",
				msg: "the matrix orders phases " + strings.Join(left, ", ") + " in a circle"}
		}
		placed[next] = true
		out = append(out, next)
	}
	return out, nil
}

// dateOrders are the orders between dates the matrix gives (a date of a
// lower unit is older, also through undated units between them), reduced
// to those no other date implies, less those the phases already imply (a
// date of an older phase is older).
func dateOrders(mx *matrix, dates []previewDate, dateUnit []int, phaseIdx map[string]int) ([]model.Order, error) {
	// The dated classes and their dates.
	datedIdx := map[int]int{} // class → index in dated
	var dated []int
	byClass := map[int][]int{}
	for i, ui := range dateUnit {
		c := mx.class[ui]
		if _, ok := datedIdx[c]; !ok {
			datedIdx[c] = len(dated)
			dated = append(dated, c)
		}
		byClass[c] = append(byClass[c], i)
	}
	// above[i]: the dated classes (indexes into dated) above dated[i].
	above := make([][]bool, len(dated))
	for i, c := range dated {
		seen := mx.reach([]int{c})
		above[i] = make([]bool, len(dated))
		for j, c2 := range dated {
			above[i][j] = seen[c2]
		}
	}
	phaseOf := func(d int) int {
		if ph := dates[d].Phase; ph != nil {
			if k, ok := phaseIdx[*ph]; ok {
				return k
			}
		}
		return -1
	}
	var out []model.Order
	for i := range dated {
		for j := range dated {
			if !above[i][j] {
				continue
			}
			redundant := false
			for k := range dated {
				if k != j && above[i][k] && above[k][j] {
					redundant = true
					break
				}
			}
			if redundant {
				continue
			}
			for _, a := range byClass[dated[i]] {
				for _, b := range byClass[dated[j]] {
					pa, pb := phaseOf(a), phaseOf(b)
					if pa >= 0 && pb >= 0 && pa < pb {
						continue // the phases say it
					}
					if len(out) == maxOrders {
						return nil, &buildError{status: http.StatusBadRequest, code: "sequence_too_large",
							msg: fmt.Sprintf("more than %d ordering constraints between dates", maxOrders)}
					}
					out = append(out, model.Order{Older: strconv.FormatInt(dates[a].ID, 10), Younger: strconv.FormatInt(dates[b].ID, 10)})
				}
			}
		}
	}
	return out, nil
}
