package main

import "testing"

func year(n int64) *int64 { return &n }

// The felling ranges below are worked by hand from the sapwood rule (a
// sample with s sapwood rings lost between max(0, min-s) and max(0, max-s)
// rings), not by the code under test.
func TestFelling(t *testing.T) {
	m := Model{Min: 10, Max: 50}
	cases := []struct {
		name     string
		s        Sample
		from, to *int64
	}{
		{"bark edge dates the last ring", Sample{FirstRing: year(1400), LastRing: year(1490), Sapwood: year(20), BarkEdge: true}, year(1490), year(1490)},
		{"some sapwood", Sample{FirstRing: year(1400), LastRing: year(1490), Sapwood: year(12)}, year(1490), year(1528)},
		{"little sapwood", Sample{FirstRing: year(1400), LastRing: year(1490), Sapwood: year(4)}, year(1496), year(1536)},
		{"more sapwood than the largest band", Sample{FirstRing: year(1400), LastRing: year(1490), Sapwood: year(60)}, year(1490), year(1490)},
		{"no sapwood seen: a terminus post quem", Sample{FirstRing: year(1400), LastRing: year(1490)}, year(1500), nil},
		{"BC years", Sample{FirstRing: year(-820), LastRing: year(-700), Sapwood: year(0)}, year(-690), year(-650)},
		{"undated", Sample{Sapwood: year(5)}, nil, nil},
	}
	for _, c := range cases {
		f := c.s.Felling(m)
		if !sameYear(yearOrNil(f.From), c.from) || !sameYear(yearOrNil(f.To), c.to) {
			t.Errorf("%s: felling %v–%v, want %v–%v", c.name, yearOrNil(f.From), yearOrNil(f.To), yearOrNil(c.from), yearOrNil(c.to))
		}
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		s     Sample
		field string // "" when the sample is fine
	}{
		{Sample{FirstRing: year(1400), LastRing: year(1490), Sapwood: year(20)}, ""},
		{Sample{FirstRing: year(1491), LastRing: year(1490)}, "first_ring"},
		{Sample{LastRing: year(1490), Sapwood: year(-1)}, "sapwood"},
		{Sample{FirstRing: year(1480), LastRing: year(1490), Sapwood: year(12)}, "sapwood"},
		{Sample{FirstRing: year(1480), LastRing: year(1490), Sapwood: year(11)}, ""},
		{Sample{BarkEdge: true}, "last_ring"},
	}
	for i, c := range cases {
		got := c.s.Check()
		switch {
		case c.field == "" && len(got) > 0:
			t.Errorf("case %d: %+v refused: %+v", i, c.s, got)
		case c.field != "" && (len(got) != 1 || got[0].Field != c.field):
			t.Errorf("case %d: problems %+v, want one on %s", i, got, c.field)
		}
	}
}

func TestOverlaps(t *testing.T) {
	closed := Felling{From: year(1490), To: year(1528)}
	open := Felling{From: year(1500)}
	for _, c := range []struct {
		f    Felling
		a, b int64
		want bool
	}{
		{closed, 1480, 1489, false}, {closed, 1480, 1490, true}, {closed, 1528, 1600, true}, {closed, 1529, 1600, false},
		{open, 1400, 1499, false}, {open, 1400, 1500, true}, {open, 1900, 2000, true}, {Felling{}, 0, 3000, false},
	} {
		if got := c.f.Overlaps(c.a, c.b); got != c.want {
			t.Errorf("%v–%v overlaps %d–%d = %v", yearOrNil(c.f.From), yearOrNil(c.f.To), c.a, c.b, got)
		}
	}
}
