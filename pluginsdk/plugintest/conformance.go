package plugintest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/pluginsdk"
)

// Conformance checks p against what the server relies on, through the same
// gRPC connection as New (opts as for New):
//
//   - pluginsdk.Check: the manifest rules (name, protocol version, names
//     and types of features, columns, routes, operators, sections and
//     system tables; no column collisions between features or with id,
//     creator, id_link; computed columns among the declared ones), a
//     handler per route, the interfaces the manifest asks for;
//   - the manifest as received over the wire passes Validate too;
//   - every route answers a request with placeholder parameters with an
//     HTTP status, not a failure;
//   - BeforeSave, given sample rows (nulls, plausible values, values of
//     the wrong type, an empty update) for each feature's table and child
//     table, answers without failing, returns only declared columns, and
//     field errors that name a declared column with a rule and a message;
//   - AfterSave, filter operators and record sections do not panic on
//     sample input; operators answer a bad operand with a *pluginsdk.Error
//     (a 400 for the client) rather than a failure; sections return only
//     the ids asked for;
//   - nothing is written to stdout while all this runs (stdout carries
//     go-plugin's handshake in a real plugin process).
//
// The stdout check replaces os.Stdout while it runs, so it sees anything
// printed through os.Stdout (fmt.Print and friends, loggers that look up
// os.Stdout when they write), not a writer that kept the original file;
// do not run Conformance in a parallel test.
func Conformance(t testing.TB, p pluginsdk.Plugin, opts ...Option) {
	t.Helper()
	c := &conformance{}
	out := captureStdout(t, func() { c.run(t, p, opts) })
	if len(out) > 0 {
		c.fail("the plugin wrote %d bytes to stdout, which belongs to go-plugin's handshake (log to stderr or Host.Log): %q", len(out), clip(out))
	}
	for _, msg := range c.problems {
		t.Error("plugintest.Conformance: " + msg)
	}
}

type conformance struct{ problems []string }

func (c *conformance) fail(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// captureStdout runs fn with os.Stdout replaced by a pipe and returns what
// arrived. The pipe is drained while fn runs, so a chatty plugin cannot
// block on a full pipe.
func captureStdout(t testing.TB, fn func()) (out []byte) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatalf("plugintest: stdout pipe: %v", err)
	}
	orig := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	// Deferred: fn may end the test's goroutine (t.Fatal).
	defer func() {
		os.Stdout = orig
		_ = w.Close()
		out = <-done
		_ = r.Close()
	}()
	fn()
	return nil
}

// conformanceActor can call every route, so that access never hides a
// handler from the checks.
var conformanceActor = pluginsdk.Actor{App: "conformance", UserID: 1, Privilege: pluginsdk.PrivilegeSuperAdmin, Name: "Conformance", Email: "conformance@example.org"}

const conformanceTable = "conformance_tb"

func (c *conformance) run(t testing.TB, p pluginsdk.Plugin, opts []Option) {
	var me *pluginsdk.ManifestError
	if err := pluginsdk.Check(p); errors.As(err, &me) {
		c.problems = append(c.problems, me.Problems...)
	} else if err != nil {
		c.fail("%v", err)
	}
	h := New(t, p, opts...)
	m := h.Manifest()
	if len(c.problems) == 0 {
		if err := m.Validate(); err != nil {
			c.fail("the manifest received over gRPC: %v", err)
		}
	}
	c.routes(h, m)
	for _, f := range m.Features {
		kinds := []rowKind{{conformanceTable, f.Columns, false}}
		if f.Child != nil {
			kinds = append(kinds, rowKind{conformanceTable + "_" + f.Child.Suffix, f.Child.Columns, true})
		}
		for _, k := range kinds {
			if len(k.cols) == 0 {
				continue
			}
			call := pluginsdk.SaveCall{Feature: f.Name, Table: conformanceTable, RowTable: k.rowTable, Rows: sampleRows(k.cols, f.Computed, k.child), Actor: conformanceActor}
			if f.BeforeSave {
				c.beforeSave(h, call, k.cols)
			}
			if f.AfterSave {
				call.Rows = call.Rows[:2] // plausible rows only: they were written
				if err := h.AfterSave(call); pluginsdk.IsPanic(err) {
					c.fail("feature %q: AfterSave on %s panicked: %v", f.Name, k.rowTable, err)
				}
			}
		}
	}
	c.operators(h, m)
	for _, s := range m.Sections {
		ids := []int64{1, 2, 3}
		got, err := h.Enrich(pluginsdk.EnrichCall{Section: s.Name, Table: conformanceTable, IDs: ids, Actor: conformanceActor})
		if pluginsdk.IsPanic(err) {
			c.fail("section %q: EnrichRecords panicked: %v", s.Name, err)
		}
		for id := range got {
			if id < 1 || id > 3 {
				c.fail("section %q: EnrichRecords returned record %d, which was not asked for", s.Name, id)
			}
		}
	}
}

// rowKind is where a feature's rows live: the table itself or its child.
type rowKind struct {
	rowTable string
	cols     []pluginsdk.Column
	child    bool
}

var pathParam = regexp.MustCompile(`[:*][A-Za-z_][A-Za-z0-9_]*`)

func (c *conformance) routes(h *Harness, m pluginsdk.Manifest) {
	for _, r := range m.Routes {
		target := pathParam.ReplaceAllString(r.Path, "1")
		var body []byte
		switch r.Method {
		case "POST", "PUT", "PATCH":
			body = []byte("{}")
		}
		resp, err := h.CallRoute(r.Method, target, body, conformanceActor)
		switch {
		case pluginsdk.IsPanic(err):
			c.fail("route %s %s panicked on %s: %v", r.Method, r.Path, target, err)
		case err != nil:
			c.fail("route %s %s failed on %s instead of answering with an HTTP status: %v", r.Method, r.Path, target, err)
		case resp.Status < 100 || resp.Status > 599:
			c.fail("route %s %s answered status %d", r.Method, r.Path, resp.Status)
		}
	}
}

// sampleRows are rows a hook must cope with: all null, plausible values,
// values of the wrong type (on a record being created: child rows have no
// parent id yet), and an update that sends nothing. Computed columns are
// left out, as the server never sends them.
func sampleRows(cols []pluginsdk.Column, computed []string, child bool) []pluginsdk.Row {
	nulls, plausible, wrong := map[string]any{}, map[string]any{}, map[string]any{}
	for _, col := range cols {
		if slices.Contains(computed, col.Name) {
			continue
		}
		nulls[col.Name] = nil
		switch col.DBType {
		case "int":
			plausible[col.Name], wrong[col.Name] = 7, "not a number"
		case "float":
			plausible[col.Name], wrong[col.Name] = 1.5, "not a number"
		case "date":
			plausible[col.Name], wrong[col.Name] = "2024-01-31", "31/01/2024"
		case "bool":
			plausible[col.Name], wrong[col.Name] = true, "maybe"
		default:
			plausible[col.Name], wrong[col.Name] = "conformance", 12
		}
	}
	parent := int64(0)
	if child {
		parent = 1
	}
	return []pluginsdk.Row{
		{Values: nulls},
		{Values: plausible},
		{Values: wrong},
		{ID: 1, ParentID: parent, Values: map[string]any{}},
	}
}

func (c *conformance) beforeSave(h *Harness, call pluginsdk.SaveCall, cols []pluginsdk.Column) {
	declared := map[string]bool{}
	for _, col := range cols {
		declared[col.Name] = true
	}
	where := fmt.Sprintf("feature %q: BeforeSave on %s", call.Feature, call.RowTable)
	results, err := h.BeforeSave(call)
	if err != nil {
		c.fail("%s failed on sample rows (bad input is reported as FieldErrors, not an error): %v", where, err)
		return
	}
	for i, res := range results {
		for k := range res.Values {
			if !declared[k] {
				c.fail("%s: row %d: the result sets %q, which is not a declared column", where, i, k)
			}
		}
		for _, fe := range res.Errors {
			if !declared[fe.Field] {
				c.fail("%s: row %d: a field error names %q, which is not a declared column", where, i, fe.Field)
			}
			if fe.Rule == "" || strings.TrimSpace(fe.Message) == "" {
				c.fail("%s: row %d: a field error on %q without a rule or a message", where, i, fe.Field)
			}
		}
	}
}

// badOperands are operands an operator must refuse cleanly or accept.
var badOperands = []string{`"x"`, `""`, `1`, `null`, `{}`, `[]`, `{"from":"x"}`}

func (c *conformance) operators(h *Harness, m pluginsdk.Manifest) {
	for _, o := range m.Operators {
		fields := o.Fields
		if len(fields) == 0 {
			fields = []string{"id"}
		}
		for _, field := range fields {
			for _, v := range badOperands {
				_, err := h.ResolveFilter(pluginsdk.FilterCall{Operator: o.Name, Table: conformanceTable, Field: field, Value: json.RawMessage(v), Actor: conformanceActor})
				var pe *pluginsdk.Error
				switch {
				case err == nil, errors.As(err, &pe):
				case pluginsdk.IsPanic(err):
					c.fail("operator %s on %s panicked on operand %s: %v", o.Name, field, v, err)
				default:
					c.fail("operator %s on %s failed on operand %s (refuse a bad operand with a *pluginsdk.Error, e.g. Errorf(\"invalid_filter\", ...)): %v", o.Name, field, v, err)
				}
			}
		}
	}
}
