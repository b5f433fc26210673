package assemblage

import (
	"encoding/json"
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
)

// digCatalog: finds (a lookup of units, a number, a text), units (a
// lookup of sites), sites, and finds_samples, a plugin table of finds.
func digCatalog() *schema.Catalog {
	return schema.NewCatalog(1, []*schema.Table{
		{Name: "sites", Fields: []*schema.Field{{Name: "name", Type: schema.FieldType("text"), DBType: schema.DBText}}},
		{Name: "units", Fields: []*schema.Field{{Name: "code", DBType: schema.DBText}, {Name: "site", DBType: schema.DBInt, IDFromTb: "sites"}}},
		{Name: "finds", Fields: []*schema.Field{{Name: "label", DBType: schema.DBText}, {Name: "weight", DBType: schema.DBFloat},
			{Name: "unit", DBType: schema.DBInt, IDFromTb: "units"}}},
		{Name: "finds_samples", IsPlugin: true, PluginOf: "finds", Fields: []*schema.Field{{Name: "lab", DBType: schema.DBText}}},
	})
}

// TestCheck: the definitions a saved analysis may hold, as the API's
// save refuses them, read against a catalog without a caller.
func TestCheck(t *testing.T) {
	cat := digCatalog()
	cases := []struct {
		name, def, code string
	}{
		{"plain count", `{"source_tb":"finds","char_field":"label","group_field":"unit"}`, ""},
		{"two hops, sum, filters list", `{"source_tb":"finds","char_field":"label","group_path":[{"local_field":"unit","join_tb":"units","join_pk":"id"},
			{"local_field":"site","join_tb":"sites","join_pk":"id"}],"group_field":"name","measure":"SUM","measure_field":"weight",
			"filters":[{"field":"label","op":"_eq","value":"a"}],"source_type":"table"}`, ""},
		{"plugin table to its parent", `{"source_tb":"finds_samples","char_field":"lab","group_path":[{"local_field":"id_link","join_tb":"finds","join_pk":"id"}],"group_field":"label"}`, ""},
		{"a filter object", `{"source_tb":"finds","char_field":"label","group_field":"id","filters":{"weight":{"_gt":"3"}}}`, ""},
		{"no source", `{"char_field":"label","group_field":"unit"}`, "parameter_missing"},
		{"unknown source", `{"source_tb":"nope","char_field":"label","group_field":"unit"}`, "table_not_found"},
		{"no group field", `{"source_tb":"finds","char_field":"label"}`, "parameter_missing"},
		{"unknown char field", `{"source_tb":"finds","char_field":"colour","group_field":"unit"}`, "invalid_field"},
		{"unknown measure", `{"source_tb":"finds","char_field":"label","group_field":"unit","measure":"avg"}`, "invalid_measure"},
		{"sum of text", `{"source_tb":"finds","char_field":"label","group_field":"unit","measure":"sum","measure_field":"label"}`, "invalid_field"},
		{"sum without field", `{"source_tb":"finds","char_field":"label","group_field":"unit","measure":"sum"}`, "invalid_measure"},
		{"not a lookup", `{"source_tb":"finds","char_field":"label","group_path":[{"local_field":"label","join_tb":"units","join_pk":"id"}],"group_field":"code"}`, "invalid_path"},
		{"join_pk not id", `{"source_tb":"finds","char_field":"label","group_path":[{"local_field":"unit","join_tb":"units","join_pk":"code"}],"group_field":"code"}`, "invalid_path"},
		{"three hops", `{"source_tb":"finds","char_field":"label","group_path":[{"local_field":"unit"},{"local_field":"site"},{"local_field":"x"}],"group_field":"name"}`, "invalid_path"},
		{"group field of the wrong table", `{"source_tb":"finds","char_field":"label","group_path":[{"local_field":"unit","join_tb":"units","join_pk":"id"}],"group_field":"label"}`, "invalid_field"},
		{"filter on an unknown field", `{"source_tb":"finds","char_field":"label","group_field":"unit","filters":[{"field":"colour","op":"_eq","value":"x"}]}`, "invalid_field"},
		{"filters not a list", `{"source_tb":"finds","char_field":"label","group_field":"unit","filters":"label = 1"}`, "invalid_filter"},
		{"an object as the source", `{"source_tb":{"a":1},"char_field":"label","group_field":"unit"}`, "invalid_json"},
	}
	for _, tc := range cases {
		var def map[string]any
		if err := json.Unmarshal([]byte(tc.def), &def); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err := Check(cat, def)
		if tc.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if e, ok := errs.As(err); !ok || e.Code != tc.code {
			t.Errorf("%s: err %v, want %s", tc.name, err, tc.code)
		}
	}
}
