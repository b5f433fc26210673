package pluginsdk

import (
	"reflect"
	"testing"
)

// The manifest's section rows and system-table indexes cross the wire
// unchanged: what the server reads is what the plugin declared.
func TestManifestWireRoundTrip(t *testing.T) {
	col := func(name string, db DBType) Column { return Column{Name: name, Label: name, Type: "text", DBType: db} }
	for _, c := range []struct {
		name string
		m    Manifest
	}{
		{"rows with an empty object", Manifest{Name: "refs", Version: "1.0.0", ProtocolVersion: ProtocolVersion,
			Sections: []Section{{Name: "bibliography", Rows: &SectionRows{Table: "links", TableColumn: "tb", IDColumn: "record_id",
				Empty: map[string]any{}}}},
			SystemTables: []SystemTable{{Name: "links", Columns: []Column{col("tb", "text"), col("record_id", "int")},
				Indexes: [][]string{{"tb", "record_id"}, {"id"}}}}}},
		{"rows with a null empty value", Manifest{Name: "refs", Version: "1.0.0", ProtocolVersion: ProtocolVersion,
			Sections: []Section{{Name: "notes", Feature: "x", Rows: &SectionRows{Table: "n", TableColumn: "t", IDColumn: "r"}},
				{Name: "plain"}},
			SystemTables: []SystemTable{{Name: "n", Columns: []Column{col("t", "text"), col("r", "int")}}}}},
		{"rows with a list", Manifest{Name: "refs", Version: "1.0.0", ProtocolVersion: ProtocolVersion,
			Sections:     []Section{{Name: "tags", Rows: &SectionRows{Table: "n", TableColumn: "t", IDColumn: "r", Empty: []any{}}}},
			SystemTables: []SystemTable{{Name: "n", Columns: []Column{col("t", "text"), col("r", "int")}}}}},
	} {
		got := ManifestFromProto(manifestToProto(c.m))
		if !reflect.DeepEqual(got.Sections, c.m.Sections) {
			t.Errorf("%s: sections %#v, want %#v", c.name, got.Sections, c.m.Sections)
		}
		if !reflect.DeepEqual(got.SystemTables, c.m.SystemTables) {
			t.Errorf("%s: system tables %#v, want %#v", c.name, got.SystemTables, c.m.SystemTables)
		}
	}
}

// Translations cross the wire unchanged, and a manifest without any (a
// plugin built before SDK v0.5.0) comes back without any.
func TestManifestTranslationsRoundTrip(t *testing.T) {
	col := func(name string) Column {
		return Column{Name: name, Label: name, Type: "text", DBType: "text", Help: "h"}
	}
	m := Manifest{Name: "dates", Version: "1.0.0", ProtocolVersion: ProtocolVersion,
		Features: []Feature{{Name: "c14", Label: "Dates", Labels: Labels{"it": "Datazioni"},
			Columns:      []Column{col("lab")},
			Child:        &ChildTable{Suffix: "c14", Label: "Dates", Labels: Labels{"it": "Datazioni", "de": "Datierungen"}, Columns: []Column{col("bp")}},
			ColumnLabels: map[string]Labels{"lab": {"it": "Laboratorio"}, "bp": {"it": "Età (BP)"}},
			ColumnHelp:   map[string]Labels{"bp": {"it": "anni BP"}}}},
		Sections:      []Section{{Name: "summary", Label: "Summary"}},
		SectionLabels: map[string]Labels{"summary": {"it": "Riepilogo"}},
		Messages:      map[string]Labels{"cal_bp": {"en": "cal BP", "it": "cal BP"}},
	}
	got := ManifestFromProto(manifestToProto(m))
	if !reflect.DeepEqual(got.Features, m.Features) || !reflect.DeepEqual(got.Sections, m.Sections) ||
		!reflect.DeepEqual(got.SectionLabels, m.SectionLabels) || !reflect.DeepEqual(got.Messages, m.Messages) {
		t.Errorf("round trip:\n got %#v\nwant %#v", got, m)
	}
	old := Manifest{Name: "old", Version: "1.0.0", ProtocolVersion: ProtocolVersion,
		Features: []Feature{{Name: "f", Label: "F", Columns: []Column{col("a")}}}, Sections: []Section{{Name: "s"}}}
	back := ManifestFromProto(manifestToProto(old))
	if back.Messages != nil || back.SectionLabels != nil || back.Features[0].Labels != nil || back.Features[0].ColumnLabels != nil {
		t.Errorf("a manifest without translations gained some: %#v", back)
	}
}
