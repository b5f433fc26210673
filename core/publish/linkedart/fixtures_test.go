package linkedart

import (
	"math"
	"strings"
)

const (
	base  = "https://data.example.org/demo/"
	vocab = base + "vocab/"
)

func year(y int) *int { return &y }

// hostile is a string meant to break naive writers: quotes, backslashes,
// markup, control characters, bidi overrides, line separators, an invalid
// UTF-8 byte, a JSON-LD keyword and a compact IRI lookalike.
const hostile = "\"quoted\" \\back\\ </script><b>&amp; \x00\x01\t\n\u202e\u2028\u2029 \xff @id crm:P1 ☃ 𝔘𝔖 \u0301"

func unitMinimal() Record {
	return Record{URI: base + "us/1", Kind: KindUnit}
}

func unitFull() Record {
	return Record{
		URI:            base + "us/1023",
		Kind:           KindUnit,
		Classification: &Term{Label: "stratigraphic unit"}, // no AAT ID entered: named under VocabBase
		Label:          "US 1023",
		Identifier:     "1023",
		Table:          "us",
		TableLabel:     "Stratigraphic units",
		TableURI:       base + "tables/us",
		VocabBase:      vocab,
		Fields: []Field{
			{Name: "description", Label: "Description", Value: "Dark brown silty clay with charcoal flecks"},
			{Name: "colour", Label: "Colour", Value: "brown", Term: &Term{ID: "http://vocab.getty.edu/aat/300127490", Label: "brown"}},
			{Name: "compaction", Label: "Compaction", Value: "loose", Term: &Term{Label: "loose"}},
			{Name: "thickness_cm", Label: "Thickness (cm)", Value: int64(35)},
			{Name: "ph", Label: "pH", Value: 6.5},
			{Name: "sieved", Label: "Sieved", Value: true},
			{Name: "notes", Label: "Notes", Value: ""},
			{Name: "empty", Label: "Empty", Value: nil},
		},
		Material:   []Term{{ID: "http://vocab.getty.edu/aat/300011105", Label: "clay"}},
		Dimensions: []Dimension{{Type: Term{ID: "http://vocab.getty.edu/aat/300072633", Label: "depth"}, Value: 0.35, Unit: Term{ID: "http://vocab.getty.edu/aat/300379099", Label: "meters"}}},
		Production: &Period{Label: "Iron Age", Begin: year(-800), End: year(-50), PeriodURI: "http://n2t.net/ark:/99152/p0xxxxx"},
		Relations: []Relation{
			{Type: "above", TypeLabel: "is above", TargetURI: base + "us/1024", TargetLabel: "US 1024"},
			{Type: "cuts", TargetURI: base + "us/1030"},
			{Type: "bonds", TypeURI: "http://example.org/rel/bonds", TargetURI: base + "us/1040", TargetLabel: "US 1040"},
		},
		Radiocarbon: []C14{{
			LabCode: "OxA-12345", BP: 2450, Error: 30, Material: "charcoal (Quercus)", Curve: "IntCal20",
			Calibrated: []Range{{From: -752, To: -485, Probability: 0.683}, {From: -762, To: -415, Probability: 0.954}},
		}},
		PartOf:   []Ref{{URI: base + "site/1", Label: "Poggio Civitate", Kind: KindSite}, {URI: base + "trench/3", Label: "Trench 3", Kind: KindOther}},
		Images:   []Ref{{URI: base + "iiif/us/1023/manifest.json", Label: "Photographs of US 1023"}},
		Homepage: base + "records/us/1023",
		Licence:  "https://creativecommons.org/licenses/by/4.0/",
	}
}

func findFull() Record {
	return Record{
		URI:            base + "finds/77",
		Kind:           KindFind,
		Classification: &Term{ID: "http://vocab.getty.edu/aat/300010666", Label: "potsherds"},
		Label:          "Find 77: rim sherd",
		Identifier:     "F77",
		Table:          "finds",
		VocabBase:      vocab,
		Fields:         []Field{{Name: "ware", Label: "Ware", Value: "impasto"}},
		Material:       []Term{{ID: "http://vocab.getty.edu/aat/300010669", Label: "ceramic"}, {Label: "impasto"}},
		Dimensions: []Dimension{
			{Type: Term{ID: "http://vocab.getty.edu/aat/300055644", Label: "height"}, Value: 4.2, Unit: Term{ID: "http://vocab.getty.edu/aat/300379098", Label: "centimeters"}},
			{Type: Term{ID: "http://vocab.getty.edu/aat/300056240", Label: "weight"}, Value: 38, Unit: Term{ID: "http://vocab.getty.edu/aat/300379225", Label: "grams"}},
		},
		Production: &Period{Label: "Orientalizing", Begin: year(-700), End: year(-600)},
		PartOf:     []Ref{{URI: base + "us/1023", Label: "US 1023", Kind: KindUnit}, {URI: base + "site/1", Label: "Poggio Civitate", Kind: KindSite}},
		Homepage:   base + "records/finds/77",
		Licence:    "https://creativecommons.org/licenses/by/4.0/",
	}
}

// fixtures are the records every test runs over: each kind, minimal and
// full, hostile strings, BC dates, years 0 and -1, huge values.
func fixtures() map[string]Record {
	f := map[string]Record{
		"unit minimal": unitMinimal(),
		"unit full":    unitFull(),
		"find minimal": {URI: base + "finds/1", Kind: KindFind, Label: "F1"},
		"find full":    findFull(),
		"sample": {URI: base + "samples/5", Kind: KindSample, Label: "Sample 5", VocabBase: vocab,
			Classification: &Term{Label: "charcoal sample"},
			Radiocarbon:    []C14{{LabCode: "Beta-1", BP: 120, Error: 15}}},
		"sample minimal": {URI: base + "samples/6", Kind: KindSample},
		"burial": {URI: base + "burials/2", Kind: KindBurial, Label: "Tomb 2", Identifier: "T2",
			Production: &Period{Label: "Hellenistic"}, PartOf: []Ref{{URI: base + "site/1", Kind: KindSite}}},
		"burial classified": {URI: base + "burials/3", Kind: KindBurial, Classification: &Term{ID: "http://vocab.getty.edu/aat/300263485", Label: "burials"}},
		"site minimal":      {URI: base + "site/1", Kind: KindSite},
		"site full": {URI: base + "site/1", Kind: KindSite, Label: "Poggio Civitate", Identifier: "PC",
			Classification: &Term{ID: "http://vocab.getty.edu/aat/300000809", Label: "archaeological sites"},
			VocabBase:      vocab, Table: "sites", Fields: []Field{{Name: "region", Label: "Region", Value: "Tuscany"}},
			PartOf:   []Ref{{URI: "http://sws.geonames.org/3165361/", Label: "Tuscany"}},
			Homepage: base + "records/site/1", Licence: "https://creativecommons.org/licenses/by/4.0/"},
		"other": {URI: base + "trench/3", Kind: KindOther, TableLabel: "Trenches"},
		"hostile": {URI: base + "us/%22%3C%3E", Kind: KindUnit, Label: hostile, Identifier: hostile, Table: hostile,
			TableLabel: hostile, TableURI: base + "tables/x", VocabBase: vocab,
			Classification: &Term{Label: hostile},
			Fields:         []Field{{Name: hostile, Label: hostile, Value: hostile}, {Name: "t", Value: "x", Term: &Term{Label: hostile}}},
			Material:       []Term{{Label: hostile}},
			Dimensions:     []Dimension{{Type: Term{Label: hostile}, Value: -0.0, Unit: Term{Label: hostile}}},
			Production:     &Period{Label: hostile},
			Relations:      []Relation{{Type: hostile, TypeLabel: hostile, TargetURI: base + "us/2", TargetLabel: hostile}},
			Radiocarbon:    []C14{{LabCode: hostile, Material: hostile, Curve: hostile}},
			PartOf:         []Ref{{URI: base + "site/1", Label: hostile, Kind: KindSite}},
			Images:         []Ref{{URI: base + "iiif/x/manifest.json", Label: hostile}}},
		"BC dates": {URI: base + "us/9", Kind: KindUnit, Production: &Period{Begin: year(-12000), End: year(-9)},
			VocabBase: vocab, Radiocarbon: []C14{{LabCode: "X", BP: 11950, Error: 60,
				Calibrated: []Range{{From: -12050, To: -11700, Probability: 0.954}}}}},
		"years 0 and -1": {URI: base + "us/10", Kind: KindFind, Production: &Period{Begin: year(-1), End: year(0)},
			VocabBase: vocab, Radiocarbon: []C14{{BP: 1950, Calibrated: []Range{{From: 0, To: 0, Probability: 1}, {From: -1, To: 1, Probability: 0}}}}},
		"only begin": {URI: base + "us/11", Kind: KindFind, Production: &Period{Begin: year(1999)}},
		"only end":   {URI: base + "us/12", Kind: KindFind, Production: &Period{End: year(10000)}},
		"huge values": {URI: base + "finds/" + strings.Repeat("9", 500), Kind: KindFind, Label: strings.Repeat("long ", 20000),
			VocabBase: vocab,
			Fields:    []Field{{Name: "n", Value: int64(math.MaxInt64)}, {Name: "m", Value: int64(math.MinInt64)}, {Name: "f", Value: math.MaxFloat64}, {Name: "nan", Value: math.NaN()}, {Name: "inf", Value: math.Inf(-1)}, {Name: "tiny", Value: math.SmallestNonzeroFloat64}},
			Dimensions: []Dimension{
				{Type: Term{Label: "weight"}, Value: math.MaxFloat64, Unit: Term{Label: "kg"}},
				{Type: Term{Label: "length"}, Value: -math.SmallestNonzeroFloat64, Unit: Term{Label: "mm"}},
			},
			Production:  &Period{Begin: year(-maxYear), End: year(maxYear)},
			Radiocarbon: []C14{{BP: maxYear / 2, Error: maxYear / 2, Calibrated: []Range{{From: -maxYear, To: maxYear, Probability: 0.954}}}},
		},
	}
	many := Record{URI: base + "us/many", Kind: KindUnit, VocabBase: vocab}
	for i := 0; i < 300; i++ {
		many.Relations = append(many.Relations, Relation{Type: []string{"above", "below", "same", "cuts", "cut_by", "fills", "filled_by", "abuts", "bonds", "covers"}[i%10], TargetURI: base + "us/t" + strings.Repeat("x", i%7)})
	}
	f["many relations"] = many
	return f
}
