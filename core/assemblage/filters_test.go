package assemblage

import (
	"encoding/json"
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
)

func TestFilterJSON(t *testing.T) {
	cases := []struct {
		name, in, want, code string
	}{
		{"absent", ``, ``, ""},
		{"null", `null`, ``, ""},
		{"empty list", `[]`, ``, ""},
		{"incomplete rows skipped", `[{"field":"","op":"_eq"},{"field":"a"}]`, ``, ""},
		{"one row", `[{"field":"a","op":"_eq","value":"x"}]`, `{"_and":[{"a":{"_eq":"x"}}]}`, ""},
		{"rows ANDed, a flag without value", `[{"field":"a","op":"_gt","value":3},{"field":"b","op":"_empty","value":""}]`,
			`{"_and":[{"a":{"_gt":3}},{"b":{"_empty":true}}]}`, ""},
		{"an object as is", `{"a":{"_eq":1}}`, `{"a":{"_eq":1}}`, ""},
		{"a string", `"a > 1"`, ``, "invalid_filter"},
		{"a list of numbers", `[1,2]`, ``, "invalid_filter"},
	}
	for _, tc := range cases {
		got, err := FilterJSON(json.RawMessage(tc.in))
		if tc.code != "" {
			if e, ok := errs.As(err); !ok || e.Code != tc.code {
				t.Errorf("%s: err %v, want %s", tc.name, err, tc.code)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}

// FuzzFilterJSON: any input gives a coded error or a filter the filter
// language parses (or rejects with its own error), never a panic.
func FuzzFilterJSON(f *testing.F) {
	for _, s := range []string{``, `null`, `[]`, `[{"field":"a","op":"_eq","value":"x"}]`, `{"a":{"_eq":1}}`,
		`[{"field":"a","op":"_null"}]`, `[{"field":{"x":1},"op":2}]`, `"x"`, `[null]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := FilterJSON(json.RawMessage(in))
		if err != nil {
			if _, ok := errs.As(err); !ok {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		if out != nil && in[0] == '[' {
			if _, err := filter.ParseJSON(out); err != nil {
				if _, ok := errs.As(err); !ok {
					t.Fatalf("filter of %q: uncoded %v", in, err)
				}
			}
		}
	})
}
