package pluginsdk_test

import (
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/pluginsdk"
)

// The constructors give the field and storage types the server expects
// for the common columns, and the result validates.
func TestFieldConstructors(t *testing.T) {
	for _, c := range []struct {
		col     pluginsdk.Column
		typ     pluginsdk.FieldType
		storage pluginsdk.DBType
	}{
		{pluginsdk.TextField("a", "A"), pluginsdk.FieldText, pluginsdk.DBText},
		{pluginsdk.LongTextField("a", "A"), pluginsdk.FieldLongText, pluginsdk.DBText},
		{pluginsdk.IntField("a", "A"), pluginsdk.FieldText, pluginsdk.DBInt},
		{pluginsdk.FloatField("a", "A"), pluginsdk.FieldText, pluginsdk.DBFloat},
		{pluginsdk.DateField("a", "A"), pluginsdk.FieldDate, pluginsdk.DBDate},
		{pluginsdk.BoolField("a", "A"), pluginsdk.FieldBoolean, pluginsdk.DBBool},
		{pluginsdk.LinkOutField("a", "A"), pluginsdk.FieldLinkOut, pluginsdk.DBText},
	} {
		if c.col.Name != "a" || c.col.Label != "A" || c.col.Type != c.typ || c.col.DBType != c.storage || c.col.Readonly {
			t.Errorf("%s/%s: %+v", c.typ, c.storage, c.col)
		}
		m := validManifest()
		m.Features[0].Columns = append(m.Features[0].Columns, c.col.WithHelp("help").AsReadonly())
		if err := m.Validate(); err != nil {
			t.Errorf("%s/%s: %v", c.typ, c.storage, err)
		}
		if got := m.Features[0].Columns[2]; got.Help != "help" || !got.Readonly {
			t.Errorf("WithHelp/AsReadonly: %+v", got)
		}
	}
	// The old spelling, untyped string constants, still compiles.
	old := pluginsdk.Column{Name: "b", Type: "text", DBType: "int"}
	if old != pluginsdk.IntField("b", "") {
		t.Errorf("Column{Type: \"text\", DBType: \"int\"} is %+v", old)
	}
}

// A storage the field type cannot hold, or a value that is no type at
// all, is a Validate problem naming the column and what is allowed.
func TestFieldTypeStorageRules(t *testing.T) {
	for _, c := range []struct {
		col  pluginsdk.Column
		want string
	}{
		{pluginsdk.Column{Name: "c", Type: pluginsdk.FieldBoolean, DBType: pluginsdk.DBDate}, `column "c": a boolean field is stored as bool, int, not date`},
		{pluginsdk.Column{Name: "c", Type: pluginsdk.FieldDate, DBType: pluginsdk.DBInt}, `column "c": a date field is stored as date, text, not int`},
		{pluginsdk.Column{Name: "c", Type: pluginsdk.FieldLongText, DBType: pluginsdk.DBFloat}, `a long_text field is stored as text, not float`},
		{pluginsdk.Column{Name: "c", Type: pluginsdk.FieldSlider, DBType: pluginsdk.DBText}, `a slider field is stored as int, float, not text`},
		{pluginsdk.Column{Name: "c", Type: "number", DBType: pluginsdk.DBInt}, `type "number" is not one of text, long_text, md,`},
		{pluginsdk.Column{Name: "c", Type: pluginsdk.FieldText, DBType: "integer"}, `db type "integer" is not one of text, int, float, date, bool`},
	} {
		m := validManifest()
		m.Features[0].Columns = append(m.Features[0].Columns, c.col)
		err := m.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.col, err, c.want)
		}
	}
}
