package plugintest_test

import (
	"encoding/json"
	"testing"

	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

func TestMatch(t *testing.T) {
	row := map[string]any{"id": 4, "label": "Amphora Ä", "n": json.Number("12"), "f": 2.5, "ok": true, "empty": "", "none": nil, "date": "2020-05-01"}
	cases := []struct {
		filter string
		want   bool
	}{
		{`{}`, true},
		{`{"label":{"_eq":"Amphora Ä"}}`, true},
		{`{"label":{"_eq":"amphora ä"}}`, false},
		{`{"n":{"_eq":"12"}}`, true},
		{`{"n":{"_gt":9}}`, true}, // numeric, not text order
		{`{"n":{"_lt":"9"}}`, false},
		{`{"n":{"_between":[10,12]}}`, true},
		{`{"n":{"_in":"1, 12"}}`, true},
		{`{"n":{"_in":[]}}`, false},
		{`{"n":{"_nin":[]}}`, true},
		{`{"none":{"_nin":[1]}}`, true},
		{`{"none":{"_in":[1]}}`, false},
		{`{"none":{"_neq":"x"}}`, true},
		{`{"none":{"_eq":"x"}}`, false},
		{`{"missing":{"_null":true}}`, true},
		{`{"label":{"_nnull":null}}`, true},
		{`{"empty":{"_empty":"true"}}`, true},
		{`{"none":{"_empty":1}}`, true},
		{`{"label":{"_nempty":true}}`, true},
		{`{"label":{"_contains":"phora"}}`, true},
		{`{"label":{"_contains":"PHORA"}}`, false},
		{`{"label":{"_icontains":"PHORA ä"}}`, true},
		{`{"label":{"_starts_with":"amph"}}`, true},
		{`{"label":{"_ends_with":"a ä"}}`, true},
		{`{"label":{"_nstarts_with":"amph"}}`, false},
		{`{"none":{"_ncontains":"x"}}`, true},
		{`{"date":{"_starts_with":"2020-05"}}`, true},
		{`{"date":{"_gte":"2020-01-01","_lt":"2021-01-01"}}`, true},
		{`{"ok":{"_eq":true}}`, true},
		{`{"ok":{"_eq":"false"}}`, false},
		{`{"f":{"_lte":2.5}}`, true},
		{`{"_or":[{"n":{"_eq":1}},{"label":{"_icontains":"amph"}}]}`, true},
		{`{"_and":[{"n":{"_eq":12}},{"label":{"_icontains":"coin"}}]}`, false},
		{`{"_or":[]}`, true},
		{`{"id":{"_eq":4},"n":{"_eq":13}}`, false},
	}
	for _, c := range cases {
		got, err := plugintest.Match(json.RawMessage(c.filter), row)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.filter, got, err, c.want)
		}
	}
	for _, bad := range []string{
		`{"site":{"name":{"_eq":"x"}}}`, // nested: needs the server
		`{"n":{"_chrono_overlap":{}}}`,  // a plugin operator
		`{"n":{"_eq":null}}`,
		`{"n":{"_null":false}}`,
		`{"n":{"_between":[1]}}`,
		`{"n":{"_eq":[1]}}`,
		`{"_eq":1}`,
		`{"_or":{}}`,
		`{"n":1}`,
		`[1]`,
	} {
		if _, err := plugintest.Match(json.RawMessage(bad), row); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	// Go maps work as filters too.
	if ok, err := plugintest.Match(map[string]any{"id": map[string]any{"_in": []int{3, 4}}}, row); !ok || err != nil {
		t.Errorf("Go map filter: %v %v", ok, err)
	}
}
