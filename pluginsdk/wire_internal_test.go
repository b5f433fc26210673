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
