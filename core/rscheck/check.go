package rscheck

import (
	"maps"
	"slices"

	"github.com/strata-archaeo/strata/core/matrix"
	"github.com/strata-archaeo/strata/core/records"
)

// Categories of the report, in its order.
const (
	Cycle             = "cycle"
	SameAbove         = "same_above"
	MissingReciprocal = "missing_reciprocal"
	Dangling          = "dangling"
	Redundant         = "redundant"
	PeriodInversion   = "period_inversion"
	TPQInversion      = "tpq_inversion"
)

// Categories lists them in the report's order.
var Categories = []string{Cycle, SameAbove, MissingReciprocal, Dangling, Redundant, PeriodInversion, TPQInversion}

// Limit bounds each category's items (the report stays one answer a
// browser can hold); count still says how many there are.
const Limit = 500

// searchBudget bounds the steps of the dating checks' searches upward
// (both together), so a matrix with a great many inversions still ends
// in time; a search stopped by it marks its category truncated.
const searchBudget = 4_000_000

// Report is the answer of GET /rs/{tb}/check (docs/api.md, "Matrix check").
type Report struct {
	Table     string               `json:"tb"`
	Units     int                  `json:"units"`
	Relations int                  `json:"relations"`
	Clean     bool                 `json:"clean"`
	Limit     int                  `json:"limit"`
	Skipped   map[string]string    `json:"skipped"`
	Problems  map[string]*Category `json:"problems"`
}

// Category is one kind of problem: how many, and the first Limit.
type Category struct {
	Count     int    `json:"count"`
	Truncated bool   `json:"truncated"`
	Items     []Item `json:"items"`
}

// Record is a record an item concerns; Label is null for a record that
// no longer exists.
type Record struct {
	ID    int64   `json:"id"`
	Label *string `json:"label"`
}

// Relation is a stored relation row (not oriented).
type Relation struct {
	ID       int64  `json:"id,omitempty"`
	First    int64  `json:"first"`
	Second   int64  `json:"second"`
	Relation int    `json:"relation"`
	Label    string `json:"relation_label"`
}

// Bound is a dating bound of a unit: a signed year (negative BCE, no
// year 0, as the chronology plugin stores them) and where it comes from.
type Bound struct {
	Year    int64  `json:"year"`
	Source  string `json:"source"` // chronology or radiocarbon
	DateID  int64  `json:"date_id,omitempty"`
	LabCode string `json:"lab_code,omitempty"`
}

// Item is one problem. Every item has records and relations (the ids a
// client links to or deletes); the other keys belong to some categories
// (docs/api.md lists which).
type Item struct {
	Records       []Record  `json:"records"`
	Relations     []int64   `json:"relations"`
	Path          []int64   `json:"path,omitempty"`
	Remove        []int64   `json:"remove,omitempty"`
	SameRelations []int64   `json:"same_relations,omitempty"`
	Upper         int64     `json:"upper,omitempty"`
	Lower         int64     `json:"lower,omitempty"`
	Relation      *Relation `json:"relation,omitempty"`
	Add           *Relation `json:"add,omitempty"`
	Missing       []int64   `json:"missing,omitempty"`
	Size          *Size     `json:"size,omitempty"`
	UpperLatest   *Bound    `json:"upper_latest,omitempty"`
	LowerEarliest *Bound    `json:"lower_earliest,omitempty"`
}

// Size is a cycle's: all its units and above/below relations.
type Size struct {
	Units     int `json:"units"`
	Relations int `json:"relations"`
}

// checker holds one table's data while its report is built.
type checker struct {
	d      *records.MatrixCheck
	labels map[int64]string
	g      *matrix.Graph
	above  map[[2]int64][]int64 // (upper, lower) → relation ids
	same   map[[2]int64][]int64 // (low id, high id) → "same as"/"bound to" ids
	sameOf map[int64][]int64    // unit → units recorded as one with it
	class  map[int64]int64      // unit → its same-as class's root
	budget int
	// truncated is set when a dating search spent its budget.
	truncated bool

	// Dense unit indexes for the paths of the dating checks (searchUp).
	ids               []int64
	idx               map[int64]int32
	aboveIdx, sameIdx [][]int32 // unit → units directly above it; recorded as one
	nodeOf            []int32
	unitMark          []int32
	unitNext          []int32
	mark              int32
	queue             []int32
}

// Check builds the report of a table's matrix. progress (may be nil)
// hears done/total after each step.
func Check(tb string, d *records.MatrixCheck, progress func(done, total int64)) *Report {
	const steps = 6
	step := func(n int64) {
		if progress != nil {
			progress(n, steps)
		}
	}
	c := newChecker(d)
	r := &Report{Table: tb, Units: len(d.Units), Relations: len(d.Relations), Limit: Limit,
		Skipped: map[string]string{}, Problems: map[string]*Category{}}
	for _, k := range Categories {
		r.Problems[k] = &Category{Items: []Item{}}
	}
	cyclic := c.cycles(r.Problems[Cycle], r.Problems[SameAbove])
	step(1)
	if cyclic {
		// The reduction is not defined until the cycles are broken.
		r.Skipped[Redundant] = "cycles"
	} else {
		c.redundant(r.Problems[Redundant])
	}
	step(2)
	c.missingReciprocal(r.Problems[MissingReciprocal])
	step(3)
	c.dangling(r.Problems[Dangling])
	step(4)
	cd := c.g.Condense()
	if d.HasChronology {
		c.periods(cd, r.Problems[PeriodInversion])
		r.Problems[PeriodInversion].Truncated = r.Problems[PeriodInversion].Truncated || c.truncated
	} else {
		r.Skipped[PeriodInversion] = "no_chronology"
	}
	step(5)
	if d.HasRadiocarbon {
		c.truncated = false
		c.tpq(cd, r.Problems[TPQInversion])
		r.Problems[TPQInversion].Truncated = r.Problems[TPQInversion].Truncated || c.truncated
	} else {
		r.Skipped[TPQInversion] = "no_radiocarbon"
	}
	step(6)
	r.Clean = true
	for _, k := range Categories {
		if r.Problems[k].Count > 0 {
			r.Clean = false
		}
	}
	return r
}

func newChecker(d *records.MatrixCheck) *checker {
	c := &checker{d: d, labels: make(map[int64]string, len(d.Units)), g: matrix.New(),
		above: map[[2]int64][]int64{}, same: map[[2]int64][]int64{}, sameOf: map[int64][]int64{}, class: map[int64]int64{}, budget: searchBudget}
	c.idx = make(map[int64]int32, len(d.Units))
	for _, u := range d.Units {
		c.labels[u.ID] = u.Label
		c.g.Add(u.ID)
		c.idx[u.ID] = int32(len(c.ids))
		c.ids = append(c.ids, u.ID)
	}
	c.aboveIdx, c.sameIdx = make([][]int32, len(c.ids)), make([][]int32, len(c.ids))
	for _, rel := range d.Relations {
		if !c.g.Relate(rel.First, rel.Relation, rel.Second) {
			continue // a code the matrix does not know says nothing of order
		}
		switch {
		case rel.Relation <= 4:
			c.addAbove(rel.Second, rel.First, rel.ID)
		case rel.Relation <= 8:
			c.addAbove(rel.First, rel.Second, rel.ID)
		default:
			k := pair(rel.First, rel.Second)
			if len(c.same[k]) == 0 {
				c.sameOf[rel.First] = append(c.sameOf[rel.First], rel.Second)
				c.sameOf[rel.Second] = append(c.sameOf[rel.Second], rel.First)
				a, b := c.idx[rel.First], c.idx[rel.Second]
				c.sameIdx[a] = append(c.sameIdx[a], b)
				c.sameIdx[b] = append(c.sameIdx[b], a)
				c.union(rel.First, rel.Second)
			}
			c.same[k] = append(c.same[k], rel.ID)
		}
	}
	return c
}

func (c *checker) addAbove(upper, lower, id int64) {
	k := [2]int64{upper, lower}
	if len(c.above[k]) == 0 {
		l := c.idx[lower]
		c.aboveIdx[l] = append(c.aboveIdx[l], c.idx[upper])
	}
	c.above[k] = append(c.above[k], id)
}

func pair(a, b int64) [2]int64 { return [2]int64{min(a, b), max(a, b)} }

func (c *checker) find(u int64) int64 {
	for {
		p, ok := c.class[u]
		if !ok || p == u {
			return u
		}
		if gp, ok := c.class[p]; ok {
			c.class[u] = gp
		}
		u = p
	}
}

func (c *checker) union(a, b int64) {
	if ra, rb := c.find(a), c.find(b); ra != rb {
		c.class[ra] = rb
	}
}

func (c *checker) record(id int64) Record {
	if l, ok := c.labels[id]; ok {
		return Record{ID: id, Label: &l}
	}
	return Record{ID: id}
}

func (c *checker) records(ids ...int64) []Record {
	out := make([]Record, 0, len(ids))
	seen := map[int64]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, c.record(id))
		}
	}
	return out
}

// pathRelations are the ids of the relations joining each two
// consecutive units of path.
func (c *checker) pathRelations(path []int64) []int64 {
	out := []int64{}
	for i := 1; i < len(path); i++ {
		a, b := path[i-1], path[i]
		out = append(out, c.above[[2]int64{a, b}]...)
		out = append(out, c.same[pair(a, b)]...)
	}
	return uniq(out)
}

func uniq(ids []int64) []int64 {
	slices.Sort(ids)
	return slices.Compact(ids)
}

func add(cat *Category, it Item) {
	cat.Count++
	if len(cat.Items) < Limit {
		cat.Items = append(cat.Items, it)
	} else {
		cat.Truncated = true
	}
}

// cycles fills the cycle and same_above categories from the matrix's
// cycles (core/matrix counts a relation between units recorded as one as
// a cycle; here it is its own category). It reports whether there was any.
func (c *checker) cycles(cyc, same *Category) bool {
	cycles := c.g.Cycles()
	if len(cycles) == 0 {
		return false
	}
	arcs := c.g.FeedbackArcs()
	for i, cy := range cycles {
		classes := map[int64]bool{}
		for _, u := range cy.Units {
			classes[c.find(u)] = true
		}
		var rels []int64
		for _, e := range cy.Relations {
			if c.find(e.Upper) == c.find(e.Lower) {
				c.sameAbove(same, e)
				continue
			}
			rels = append(rels, c.above[[2]int64{e.Upper, e.Lower}]...)
		}
		if len(classes) < 2 {
			continue // only units recorded as one, related above each other
		}
		var remove []int64
		for _, e := range arcs[i] {
			if c.find(e.Upper) != c.find(e.Lower) {
				remove = append(remove, c.above[[2]int64{e.Upper, e.Lower}]...)
			}
		}
		// A wrong "same as" between distant units can tangle most of a
		// site into one cycle: the item names the units of its path and
		// of the relations to remove, and counts the rest.
		remove = uniq(remove)
		named := slices.Clone(cy.Path)
		for _, e := range arcs[i] {
			if c.find(e.Upper) != c.find(e.Lower) {
				named = append(named, e.Upper, e.Lower)
			}
		}
		pathRels := c.pathRelations(cy.Path)
		add(cyc, Item{Records: c.records(named...), Relations: uniq(append(pathRels, remove...)), Path: cy.Path, Remove: remove,
			Size: &Size{Units: len(cy.Units), Relations: len(uniq(rels))}})
	}
	return true
}

// sameAbove reports upper above lower though they are recorded as one:
// the path closes from lower back to upper through "same as" links.
func (c *checker) sameAbove(cat *Category, e matrix.Edge) {
	back := c.samePath(e.Lower, e.Upper)
	path := append([]int64{e.Upper}, back...)
	var sameIDs []int64
	for i := 1; i < len(back); i++ {
		sameIDs = append(sameIDs, c.same[pair(back[i-1], back[i])]...)
	}
	add(cat, Item{Records: c.records(path...), Relations: uniq(slices.Clone(c.above[[2]int64{e.Upper, e.Lower}])),
		SameRelations: uniq(sameIDs), Path: path, Upper: e.Upper, Lower: e.Lower})
}

// samePath is a shortest way from a to b through "same as" links only.
func (c *checker) samePath(a, b int64) []int64 {
	prev := map[int64]int64{a: a}
	queue := []int64{a}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if x == b {
			var out []int64
			for y := b; ; y = prev[y] {
				out = append(out, y)
				if y == a {
					break
				}
			}
			slices.Reverse(out)
			return out
		}
		for _, y := range c.sameOf[x] {
			if _, seen := prev[y]; !seen {
				prev[y] = x
				queue = append(queue, y)
			}
		}
	}
	return []int64{a, b}
}

// redundant fills its category from the transitive reduction.
func (c *checker) redundant(cat *Category) {
	edges, ok := c.g.Redundant()
	if !ok {
		return
	}
	for _, e := range edges {
		add(cat, Item{Records: c.records(e.Upper, e.Lower), Relations: uniq(slices.Clone(c.above[[2]int64{e.Upper, e.Lower}])),
			Upper: e.Upper, Lower: e.Lower})
	}
}

// Missing is the set of relations the missing_reciprocal category
// reports: in a table where at least one relation is stored in both
// directions (as BraDypUS keeps them), each relation with no row at all
// the other way. A relation whose other-way row says something else
// (a covers b, b covers a) is a contradiction, not a missing row: the
// matrix reports it as a cycle, and no reciprocal could be added beside it.
func Missing(rels []records.CheckRelation) map[int64]bool {
	type key struct{ a, b int64 }
	rows := make(map[key]int, len(rels))
	for _, r := range rels {
		rows[key{r.First, r.Second}] = r.Relation
	}
	both := false
	for _, r := range rels {
		if inv, ok := rows[key{r.Second, r.First}]; ok && inv == records.InverseRelation(r.Relation) {
			both = true
			break
		}
	}
	out := map[int64]bool{}
	if !both {
		return out
	}
	for _, r := range rels {
		if _, ok := rows[key{r.Second, r.First}]; !ok {
			out[r.ID] = true
		}
	}
	return out
}

func relationOf(r records.CheckRelation) *Relation {
	return &Relation{ID: r.ID, First: r.First, Second: r.Second, Relation: r.Relation, Label: records.RelationNames[r.Relation]}
}

func (c *checker) missingReciprocal(cat *Category) {
	missing := Missing(c.d.Relations)
	for _, r := range c.d.Relations {
		if !missing[r.ID] {
			continue
		}
		inv := records.InverseRelation(r.Relation)
		add(cat, Item{Records: c.records(r.First, r.Second), Relations: []int64{r.ID}, Relation: relationOf(r),
			Add: &Relation{First: r.Second, Second: r.First, Relation: inv, Label: records.RelationNames[inv]}})
	}
}

func (c *checker) dangling(cat *Category) {
	for _, r := range c.d.Dangling {
		var seen []int64
		for _, end := range []int64{r.First, r.Second} {
			if !slices.Contains(r.Missing, end) {
				seen = append(seen, end)
			}
		}
		add(cat, Item{Records: c.records(seen...), Relations: []int64{r.ID}, Relation: relationOf(r.CheckRelation), Missing: r.Missing})
	}
}

// Years: the chronology plugin's signed years have no year 0; cal BP
// counts back from 1950. Both are compared on astronomical years (1 BCE
// = 0), the order of which is the same.
func astroOfSigned(y int64) int64 {
	if y < 0 {
		return y + 1
	}
	return y
}

func signedOfAstro(a int64) int64 {
	if a <= 0 {
		return a - 1
	}
	return a
}

func astroOfBP(bp int64) int64 { return 1950 - bp }

// bound is a Bound on astronomical years while the search runs.
type bound struct {
	year int64
	b    Bound
}

func chronoBound(y int64) bound {
	return bound{astroOfSigned(y), Bound{Year: y, Source: "chronology"}}
}

func dateBound(d records.CheckDate, bp int64) bound {
	a := astroOfBP(bp)
	return bound{a, Bound{Year: signedOfAstro(a), Source: "radiocarbon", DateID: d.ID, LabCode: d.LabCode}}
}

// periods: a unit dated to a later period below one of an earlier
// period, no overlap (lower.chrono_from > upper.chrono_to).
func (c *checker) periods(cd *matrix.Condensed, cat *Category) {
	early, late := c.chronoBounds()
	c.budget = searchBudget
	c.inversions(cd, early, late, func(u, l int64, path func() []int64) bool {
		return c.addInversion(cat, u, l, late[u], early[l], path)
	})
}

// chronoBounds are the units' chronology bounds: chrono_from (earliest)
// and chrono_to (latest).
func (c *checker) chronoBounds() (early, late map[int64]bound) {
	early, late = map[int64]bound{}, map[int64]bound{}
	if !c.d.HasChronology {
		return early, late
	}
	for _, u := range c.d.Units {
		if u.ChronoFrom != nil {
			early[u.ID] = chronoBound(*u.ChronoFrom)
		}
		if u.ChronoTo != nil {
			late[u.ID] = chronoBound(*u.ChronoTo)
		}
	}
	return early, late
}

// tpq: inversions a radiocarbon date shows. A lower unit's terminus
// post quem (TPQ) is the latest of its earliest possible years: its
// chrono_from and each of its dates' older 2σ end; an upper unit's latest
// possible year is the earliest of its chrono_to and each of its dates'
// younger 2σ end. A pair is reported when the dates of one side are
// enough to invert it: the lower's dates' TPQ later than the upper's
// latest year, or the lower's TPQ later than the upper's dates' latest
// year. Two searches, each pruned on the dated units; a pair found by
// both is reported once, with the bounds of the first. (A pair the
// chronology alone inverts is a period_inversion; when a date shows it
// too it is in both.)
func (c *checker) tpq(cd *matrix.Condensed, cat *Category) {
	chronoEarly, chronoLate := c.chronoBounds()
	early, late := maps.Clone(chronoEarly), maps.Clone(chronoLate)
	dateEarly, dateLate := map[int64]bound{}, map[int64]bound{}
	for _, d := range c.d.Dates {
		if e := dateBound(d, d.Cal2To); !hasBound(dateEarly, d.Unit) || e.year > dateEarly[d.Unit].year {
			dateEarly[d.Unit] = e
		}
		if l := dateBound(d, d.Cal2From); !hasBound(dateLate, d.Unit) || l.year < dateLate[d.Unit].year {
			dateLate[d.Unit] = l
		}
	}
	for u, b := range dateEarly {
		if !hasBound(early, u) || b.year > early[u].year {
			early[u] = b
		}
	}
	for u, b := range dateLate {
		if !hasBound(late, u) || b.year < late[u].year {
			late[u] = b
		}
	}
	done := map[[2]int64]bool{}
	emit := func(lower, upper map[int64]bound) func(u, l int64, path func() []int64) bool {
		return func(u, l int64, path func() []int64) bool {
			k := [2]int64{u, l}
			if done[k] {
				return true
			}
			done[k] = true
			return c.addInversion(cat, u, l, upper[u], lower[l], path)
		}
	}
	c.budget = searchBudget
	c.inversions(cd, dateEarly, late, emit(dateEarly, late))
	if !cat.Truncated && !c.truncated {
		c.inversions(cd, early, dateLate, emit(early, dateLate))
	}
	if cat.Truncated || c.truncated {
		return
	}
	// The two searches each list their pairs by lower unit; the report
	// lists them so too.
	slices.SortStableFunc(cat.Items, func(a, b Item) int {
		if a.Lower != b.Lower {
			return cmpID(a.Lower, b.Lower)
		}
		return cmpID(a.Upper, b.Upper)
	})
}

func cmpID(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func hasBound(m map[int64]bound, id int64) bool { _, ok := m[id]; return ok }

// addInversion adds the pair with its path down; false once the
// category is full.
func (c *checker) addInversion(cat *Category, u, l int64, ub, lb bound, pathOf func() []int64) bool {
	if len(cat.Items) >= Limit {
		cat.Truncated = true
		return false
	}
	path := pathOf()
	upper, lower := ub.b, lb.b
	add(cat, Item{Records: c.records(path...), Relations: c.pathRelations(path), Path: path,
		Upper: u, Lower: l, UpperLatest: &upper, LowerEarliest: &lower})
	return true
}

const noBound = int64(1) << 62

// inversions finds each pair (upper above lower, through any number of
// relations, not in one node) with late[upper] < early[lower] and calls
// emit with it and a function giving a shortest path down from upper to
// lower, until emit answers false (its category is full) or the budget
// is spent (c.truncated). best[n] is the
// earliest latest-bound of everything strictly above node n, filled top
// down, so a lower unit is searched only when something above it is
// inverted, and the search upward goes only where it is.
func (c *checker) inversions(cd *matrix.Condensed, early, late map[int64]bound, emit func(u, l int64, path func() []int64) bool) {
	n := len(cd.Units)
	own := make([]int64, n) // the earliest latest-bound within the node
	best := make([]int64, n)
	for i := range n {
		own[i], best[i] = noBound, noBound
		for _, u := range cd.Units[i] {
			if b, ok := late[u]; ok {
				own[i] = min(own[i], b.year)
			}
		}
	}
	for _, x := range cd.Top {
		for _, p := range cd.Above[x] {
			best[x] = min(best[x], own[p], best[p])
		}
	}
	lowers := make([]int64, 0, len(early))
	for id := range early {
		lowers = append(lowers, id)
	}
	slices.Sort(lowers)
	// Dense per-node search state, reused: stamp[x] == round marks x seen
	// in this lower unit's search, prev[x] the node below it on the way.
	stamp := make([]int32, n)
	prev := make([]int32, n)
	var round int32
	var queue, found []int
	for _, l := range lowers {
		e := early[l].year
		ln, ok := cd.Node(l)
		if !ok || best[ln] >= e {
			continue
		}
		round++
		stamp[ln], prev[ln] = round, int32(ln)
		queue, found = append(queue[:0], ln), found[:0]
		for i := 0; i < len(queue); i++ {
			x := queue[i]
			if c.budget--; c.budget < 0 {
				c.truncated = true
				return
			}
			if x != ln && own[x] < e {
				found = append(found, x)
			}
			for _, p := range cd.Above[x] {
				if stamp[p] != round && min(own[p], best[p]) < e {
					stamp[p], prev[p] = round, int32(x)
					queue = append(queue, p)
				}
			}
		}
		searched := false // the unit-level search up from l, once per l
		for _, x := range found {
			uppers := slices.Clone(cd.Units[x])
			slices.Sort(uppers)
			for _, u := range uppers {
				b, ok := late[u]
				if !ok || b.year >= e {
					continue
				}
				path := func() []int64 {
					if !searched {
						c.searchUp(cd, l, stamp, round)
						searched = true
					}
					return c.pathDown(u, l)
				}
				if !emit(u, l, path) {
					return
				}
			}
		}
	}
}

// searchUp is a search from lower up along "above" relations and
// "same as" links, through the units of the nodes the node-level search
// reached (stamp[node] == round: each lies above lower on a way to it),
// leaving in unitNext the next unit down towards lower: one search gives
// the paths of every upper unit of lower's pairs. Dense arrays, reused:
// a way may pass through a cycle holding most of the site.
func (c *checker) searchUp(cd *matrix.Condensed, lower int64, stamp []int32, round int32) {
	if c.nodeOf == nil {
		c.nodeOf = make([]int32, len(c.ids))
		for i, id := range c.ids {
			n, _ := cd.Node(id)
			c.nodeOf[i] = int32(n)
		}
		c.unitMark = make([]int32, len(c.ids))
		c.unitNext = make([]int32, len(c.ids))
	}
	c.mark++
	l := c.idx[lower]
	c.unitMark[l], c.unitNext[l] = c.mark, l
	queue := append(c.queue[:0], l)
	for i := 0; i < len(queue); i++ {
		x := queue[i]
		for _, next := range [2][]int32{c.aboveIdx[x], c.sameIdx[x]} {
			for _, y := range next {
				if c.unitMark[y] != c.mark && stamp[c.nodeOf[y]] == round {
					c.unitMark[y], c.unitNext[y] = c.mark, x
					queue = append(queue, y)
				}
			}
		}
	}
	c.queue = queue
}

// pathDown is the way searchUp found from upper down to lower.
func (c *checker) pathDown(upper, lower int64) []int64 {
	u, l := c.idx[upper], c.idx[lower]
	if c.unitMark[u] != c.mark {
		return []int64{upper, lower} // not reached: cannot happen, the nodes are joined
	}
	out := []int64{upper}
	for y := u; y != l; {
		y = c.unitNext[y]
		out = append(out, c.ids[y])
	}
	return out
}
