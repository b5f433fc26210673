package plugintest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

// recorder collects what Conformance reports instead of failing the test.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	messages []string
}

func (r *recorder) Error(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages = append(r.messages, fmt.Sprint(args...))
}

func (r *recorder) Errorf(format string, args ...any) { r.Error(fmt.Sprintf(format, args...)) }

func (r *recorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.messages, "\n")
}

// good does everything right, with every capability.
type good struct{}

func (good) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{
		Name: "good", Version: "1.0.0",
		Features: []pluginsdk.Feature{
			{Name: "good", Columns: []pluginsdk.Column{{Name: "good_n", Type: "slider", DBType: "int"}}, BeforeSave: true, AfterSave: true},
			{Name: "good_parts", Child: &pluginsdk.ChildTable{Suffix: "parts", Columns: []pluginsdk.Column{{Name: "part", Type: "text", DBType: "text"}}},
				BeforeSave: true, AfterSave: true},
		},
		Routes: []pluginsdk.Route{{Method: "POST", Path: "/good/:id", Access: pluginsdk.AccessAdmin, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if pluginsdk.Param(r, "id") == "" {
				pluginsdk.WriteError(w, 400, "missing_id", "no id")
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})}},
		Operators: []pluginsdk.Operator{{Name: "_good_at_least", Feature: "good", Fields: []string{"good_n"}}},
		Sections:  []pluginsdk.Section{{Name: "good_section"}},
	}
}

func (good) BeforeSave(_ context.Context, call pluginsdk.SaveCall) ([]pluginsdk.RowResult, error) {
	out := make([]pluginsdk.RowResult, len(call.Rows))
	for i, r := range call.Rows {
		if v, ok := r.Values["good_n"]; ok && v != nil {
			if _, isInt := pluginsdk.Int(v); !isInt {
				out[i].Errors = []pluginsdk.FieldError{{Field: "good_n", Rule: "type", Message: "an integer"}}
			}
		}
	}
	return out, nil
}

func (good) AfterSave(context.Context, pluginsdk.SaveCall) error { return nil }

func (good) ResolveFilter(_ context.Context, call pluginsdk.FilterCall) (pluginsdk.FilterResult, error) {
	var n int
	if _, err := fmt.Sscan(string(call.Value), &n); err != nil {
		return pluginsdk.FilterResult{}, pluginsdk.Errorf("invalid_filter", "a number")
	}
	return pluginsdk.FilterResult{Filter: map[string]any{call.Field: map[string]any{"_gte": n}}}, nil
}

func (good) EnrichRecords(_ context.Context, call pluginsdk.EnrichCall) (map[int64]any, error) {
	return map[int64]any{call.IDs[0]: true}, nil
}

func TestConformanceOfAGoodPlugin(t *testing.T) {
	rec := &recorder{TB: t}
	plugintest.Conformance(rec, good{})
	if msgs := rec.all(); msgs != "" {
		t.Errorf("a good plugin was reported:\n%s", msgs)
	}
	plugintest.Conformance(t, good{}) // and for real
}

// faulty breaks one rule per capability.
type faulty struct{}

func (faulty) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{
		Name: "faulty", Version: "1.0.0",
		Features: []pluginsdk.Feature{
			{Name: "leaks", Columns: []pluginsdk.Column{{Name: "leak", Type: "text", DBType: "text"}}, BeforeSave: true, AfterSave: true},
			{Name: "chatty", Columns: []pluginsdk.Column{{Name: "chat", Type: "text", DBType: "text"}, {Name: "id", Type: "text", DBType: "text"}}, BeforeSave: true},
			{Name: "strict", Child: &pluginsdk.ChildTable{Suffix: "strict", Columns: []pluginsdk.Column{{Name: "n", Type: "text", DBType: "int"}}}, BeforeSave: true},
		},
		Routes: []pluginsdk.Route{
			{Method: "GET", Path: "/faulty/:id", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				panic("route boom")
			})},
		},
		Operators: []pluginsdk.Operator{{Name: "_faulty"}},
		Sections:  []pluginsdk.Section{{Name: "faulty_section"}},
	}
}

func (faulty) BeforeSave(_ context.Context, call pluginsdk.SaveCall) ([]pluginsdk.RowResult, error) {
	out := make([]pluginsdk.RowResult, len(call.Rows))
	switch call.Feature {
	case "leaks":
		for i := range out {
			out[i].Values = map[string]any{"leak": "x", "not_mine": 1}
			out[i].Errors = []pluginsdk.FieldError{{Field: "elsewhere", Rule: "r", Message: "m"}, {Field: "leak"}}
		}
	case "chatty":
		fmt.Println("hello from a hook")
	case "strict":
		for _, r := range call.Rows {
			if _, ok := pluginsdk.Int(r.Values["n"]); r.Values["n"] != nil && !ok {
				return nil, errors.New("n is not a number")
			}
		}
	}
	return out, nil
}

func (faulty) AfterSave(context.Context, pluginsdk.SaveCall) error { panic("after boom") }

func (faulty) ResolveFilter(context.Context, pluginsdk.FilterCall) (pluginsdk.FilterResult, error) {
	return pluginsdk.FilterResult{}, errors.New("cannot")
}

func (faulty) EnrichRecords(context.Context, pluginsdk.EnrichCall) (map[int64]any, error) {
	return map[int64]any{99: "not asked"}, nil
}

func TestConformanceFindsFaults(t *testing.T) {
	rec := &recorder{TB: t}
	plugintest.Conformance(rec, faulty{})
	got := rec.all()
	for _, want := range []string{
		`feature "chatty": column "id" is a system column`,
		"route GET /faulty/:id panicked on /faulty/1",
		`feature "leaks": BeforeSave on conformance_tb: row 0: the result sets "not_mine", which is not a declared column`,
		`a field error names "elsewhere", which is not a declared column`,
		`a field error on "leak" without a rule or a message`,
		`feature "leaks": AfterSave on conformance_tb panicked`,
		`feature "strict": BeforeSave on conformance_tb_strict failed on sample rows`,
		"operator _faulty on id failed on operand",
		`section "faulty_section": EnrichRecords returned record 99`,
		"the plugin wrote 18 bytes to stdout",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Conformance did not report %q; it reported:\n%s", want, got)
		}
	}
}
