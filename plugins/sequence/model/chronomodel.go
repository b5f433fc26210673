package model

import (
	"fmt"
	"strings"
)

// ExportChronoModel writes m as a ChronoModel CSV import file (ChronoModel
// 2/3, Model view, Import data > Load CSV file; the rows are then dragged
// onto the scene). ChronoModel reads one date per row,
//
//	EventName,14C,DataName,Age,Error,Curve,ΔR,ΔRError
//
// (its 14C plugin's columns after the event name and the method; the
// curve is the file name, lower case, e.g. "intcal20.14c"), a "Title,…"
// row, and comment rows starting with "#" or "//". Cells are separated by
// "," and decimals by "." (ChronoModel's defaults, Application Settings);
// it splits rows on the separator without quoting, so commas and line
// breaks in names become spaces. Each date is its own event (named by
// Date.Name(), the data by Date.ID), since that is what an OxCal R_Date
// in a Phase is. ChronoModel's CSV cannot carry phases or constraints:
// they are listed as comment rows, to be drawn in the Events and Phases
// views. ChronoModel takes any first cell containing "title" or
// "structure" for a header row, so such event names are replaced by
// "Event <n>" (the comment rows keep the real name).
func ExportChronoModel(m Model) string {
	var b strings.Builder
	clean := func(s string) string {
		s = strings.NewReplacer(",", " ", ";", " ", "\n", " ", "\r", " ").Replace(s)
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "#") || strings.HasPrefix(s, "//") {
			s = "_" + s
		}
		return s
	}
	name := m.Name
	if name == "" {
		name = "Strata model"
	}
	b.WriteString("# Exported by Strata (sequence plugin) for ChronoModel: cell separator \",\", decimal separator \".\".\n")
	b.WriteString("# Columns: event, method, data name, age BP, error, curve, delta R, delta R error.\n")
	fmt.Fprintf(&b, "Title,%s\n", clean(name))
	idx := map[string]string{}
	for _, d := range m.Dates {
		idx[d.ID] = d.Name()
	}
	for k, ph := range m.Phases {
		var names []string
		for _, id := range ph.Dates {
			names = append(names, clean(idx[id]))
		}
		fmt.Fprintf(&b, "# Phase %d (oldest first) %s: %s\n", k+1, clean(ph.Name), strings.Join(names, " | "))
	}
	if len(m.Phases) > 0 {
		mode := m.Boundaries
		if mode == "" {
			mode = Contiguous
		}
		fmt.Fprintf(&b, "# Phases in sequence, boundaries %s; each phase bounded by a start and an end.\n", mode)
	}
	for _, o := range m.Orders {
		fmt.Fprintf(&b, "# Constraint: %s is older than %s\n", clean(idx[o.Older]), clean(idx[o.Younger]))
	}
	for i, d := range m.Dates {
		ev := clean(d.Name())
		if l := strings.ToLower(ev); strings.Contains(l, "title") || strings.Contains(l, "structure") {
			ev = fmt.Sprintf("Event %d", i+1)
		}
		curve := strings.ToLower(d.Curve)
		if curve == "" {
			curve = "intcal20"
		}
		fmt.Fprintf(&b, "%s,14C,%s,%s,%s,%s.14c,0,0\n", ev, clean(d.ID), num(d.BP), num(d.Error), clean(curve))
	}
	return b.String()
}
