package model

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
)

func TestPrepareRefuses(t *testing.T) {
	cs := curves(t)
	ok := []Date{{ID: "A", BP: 2500, Error: 30}, {ID: "B", BP: 2450, Error: 30}, {ID: "C", BP: 2400, Error: 30}}
	for _, tc := range []struct {
		name string
		m    Model
		want error
		msg  string
	}{
		{"no dates", Model{}, ErrInvalidModel, "no dates"},
		{"repeated id", Model{Dates: []Date{ok[0], ok[0]}}, ErrInvalidModel, `"A" is repeated`},
		{"unknown in order", Model{Dates: ok, Orders: []Order{{"A", "Z"}}}, ErrInvalidModel, `unknown date "Z"`},
		{"self order", Model{Dates: ok, Orders: []Order{{"A", "A"}}}, ErrInvalidModel, "against itself"},
		{"two phases", Model{Dates: ok, Phases: []Phase{{Name: "I", Dates: []string{"A"}}, {Name: "II", Dates: []string{"A"}}}}, ErrInvalidModel, `"A" is in phases`},
		{"unknown in phase", Model{Dates: ok, Phases: []Phase{{Name: "I", Dates: []string{"Q"}}}}, ErrInvalidModel, `unknown date "Q"`},
		{"bad mode", Model{Dates: ok, Boundaries: "overlapping"}, ErrInvalidModel, "boundaries must be"},
		{"range", Model{Dates: ok, Range: &CalRange{Young: 3000, Old: 2000}}, ErrInvalidModel, "older than old"},
		{"range off curve", Model{Dates: ok, Range: &CalRange{Young: 2000, Old: 60000}}, ErrInvalidModel, "beyond the curves"},
		{"range too long", Model{Dates: ok, Range: &CalRange{Young: 0, Old: 30000}}, ErrInvalidModel, "at most"},
		{"zero error", Model{Dates: []Date{{ID: "A", BP: 2500}}}, ErrCalibration, "bp_error"},
		{"unknown curve", Model{Dates: []Date{{ID: "A", BP: 2500, Error: 30, Curve: "intcal98"}}}, ErrCalibration, "intcal98"},
		{"out of curve", Model{Dates: []Date{{ID: "A", BP: 70000, Error: 30}}}, ErrCalibration, "outside"},
		{"cycle", Model{Dates: ok, Orders: []Order{{"A", "B"}, {"B", "C"}, {"C", "A"}}}, ErrCycle, ""},
		{"cycle through phases", Model{Dates: ok, Orders: []Order{{"C", "A"}},
			Phases: []Phase{{Name: "I", Dates: []string{"A"}}, {Name: "II", Dates: []string{"C"}}}}, ErrCycle, "C > A > I/II > C"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Prepare(tc.m, cs)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v, want %v containing %q", err, tc.want, tc.msg)
			}
		})
	}
}

func TestCyclePath(t *testing.T) {
	cs := curves(t)
	m := Model{Dates: []Date{{ID: "US12", BP: 2500, Error: 30}, {ID: "US15", BP: 2450, Error: 30}, {ID: "US9", BP: 2400, Error: 30}, {ID: "US1", BP: 2300, Error: 30}},
		Orders: []Order{{"US1", "US12"}, {"US12", "US15"}, {"US15", "US9"}, {"US9", "US12"}}}
	_, err := Prepare(m, cs)
	if !errors.Is(err, ErrCycle) {
		t.Fatal(err)
	}
	// The path of the cycle, each older than the next, back to its start;
	// US1 is not on it.
	msg := err.Error()
	path := msg[strings.LastIndex(msg, ": ")+2:]
	parts := strings.Split(path, " > ")
	if len(parts) != 4 || parts[0] != parts[3] || strings.Contains(path, "US1 ") {
		t.Errorf("cycle path %q", path)
	}
	for i := 0; i+1 < len(parts); i++ {
		found := false
		for _, o := range m.Orders {
			found = found || (o.Older == parts[i] && o.Younger == parts[i+1])
		}
		if !found {
			t.Errorf("%s > %s is not an order of the model", parts[i], parts[i+1])
		}
	}
}

func TestDefaultRangeAndBoundaries(t *testing.T) {
	cs := curves(t)
	m, _, _ := twoPhaseModel(CalRange{})
	m.Range = nil
	m.Boundaries = Sequential
	p, err := Prepare(m, cs)
	if err != nil {
		t.Fatal(err)
	}
	r := p.Range()
	// Each date's 4σ calibrated span lies inside, with at least
	// DefaultRangePad years to spare.
	for _, d := range m.Dates {
		c, _ := cs[calib.IntCal20].Calibrate(d.BP, d.Error)
		lo, hi := c.Distribution[0].CalBP, c.Distribution[len(c.Distribution)-1].CalBP
		if lo-r.Young < DefaultRangePad || r.Old-hi < DefaultRangePad {
			t.Errorf("%s: span %d–%d, range %d–%d", d.ID, lo, hi, r.Young, r.Old)
		}
	}
	var names []string
	for _, b := range p.Boundaries() {
		names = append(names, b.Name+"/"+b.Kind)
	}
	if got := strings.Join(names, ","); got != "Start I/start,End I/end,Start II/start,End II/end" {
		t.Errorf("boundaries %s", got)
	}
}

func TestProgressAndCancel(t *testing.T) {
	cs := curves(t)
	m, _, _ := twoPhaseModel(CalRange{Young: 2000, Old: 3200})
	p, err := Prepare(m, cs)
	if err != nil {
		t.Fatal(err)
	}
	var calls [][2]int
	res, err := p.Run(context.Background(), Options{Seed: 1, Chains: 2, BurnIn: 100, Iterations: 1200, MaxIterations: 1200,
		Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 {
		t.Fatal("no progress")
	}
	for i, c := range calls {
		if c[1] != 2*(100+1200) || (i > 0 && c[0] <= calls[i-1][0]) {
			t.Fatalf("progress %v", calls)
		}
	}
	if last := calls[len(calls)-1]; last[0] != last[1] {
		t.Errorf("last progress %v", last)
	}
	if res.Iterations != 1200 || res.Chains != 2 {
		t.Errorf("iterations %d chains %d", res.Iterations, res.Chains)
	}

	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err = p.Run(ctx, Options{Seed: 1, Iterations: 1_000_000, Progress: func(done, total int) {
		if n++; n == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

func TestHPD(t *testing.T) {
	// Two humps over cal BP 100…: 0.5 on years 100–101, 0.45 on 130–131,
	// 0.05 spread over 110–114.
	p := make([]float64, 40)
	p[0], p[1] = 0.25, 0.25
	p[30], p[31] = 0.225, 0.225
	for k := 10; k < 15; k++ {
		p[k] = 0.01
	}
	got := HPD(p, 100, 0.9)
	// Oldest first: 131–130 cal BP are the years 1819–1820.
	want := []Range{{From: 1819, To: 1820, P: 0.45}, {From: 1849, To: 1850, P: 0.5}}
	if len(got) != 2 || got[0].From != want[0].From || got[0].To != want[0].To || got[1].From != want[1].From || got[1].To != want[1].To {
		t.Errorf("HPD %v, want %v", got, want)
	}
	// At 99.5 % the middle years join the younger hump (gap < HPDMergeGap).
	got = HPD(p, 100, 0.995)
	if len(got) != 2 || got[1].From != 1950-114 || got[1].To != 1850 {
		t.Errorf("HPD 99.5%% %v", got)
	}
}
