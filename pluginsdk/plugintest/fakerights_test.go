package plugintest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

// dating reads records through its Host: the rows of a table as the
// caller (the table in the path, in ?tb=, or fixed), the columns the
// query names as the plugin itself, and a route that panics.
type dating struct {
	mu   sync.Mutex
	host pluginsdk.Host
}

func (d *dating) Manifest() pluginsdk.Manifest {
	rows := func(table func(*http.Request) string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			actor := pluginsdk.ActorFrom(r)
			rows, _, err := d.hostOf().QueryRecords(r.Context(), pluginsdk.QueryRecordsInput{App: actor.App, Table: table(r),
				Columns: []string{"code"}, SortField: "code", Actor: &actor})
			if err != nil {
				pluginsdk.WriteHostError(w, err)
				return
			}
			var codes []string
			for _, row := range rows {
				codes = append(codes, fmt.Sprint(row["code"]))
			}
			pluginsdk.WriteJSON(w, 200, map[string]any{"status": "success", "codes": codes, "privilege": actor.Privilege})
		})
	}
	return pluginsdk.Manifest{
		Name: "dating", Version: "1.0.0",
		Features: []pluginsdk.Feature{
			{Name: "dating", Columns: []pluginsdk.Column{pluginsdk.IntField("dated_from", "From")}},
			{Name: "samples", Child: &pluginsdk.ChildTable{Suffix: "samples", Columns: []pluginsdk.Column{pluginsdk.TextField("code", "Code")}}},
		},
		Routes: []pluginsdk.Route{
			{Method: "GET", Path: "/dating/rows/:tb", Access: pluginsdk.AccessRead, Handler: rows(func(r *http.Request) string { return pluginsdk.Param(r, "tb") })},
			{Method: "GET", Path: "/dating/rows", Access: pluginsdk.AccessRead, Handler: rows(func(r *http.Request) string { return r.URL.Query().Get("tb") })},
			{Method: "POST", Path: "/dating/rows", Access: pluginsdk.AccessEdit, Handler: rows(func(r *http.Request) string { return r.URL.Query().Get("tb") })},
			{Method: "GET", Path: "/dating/summary", Access: pluginsdk.AccessRead, Handler: rows(func(*http.Request) string { return "finds" })},
			{Method: "GET", Path: "/dating/panic", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				panic("dating broke")
			})},
		},
	}
}

func (d *dating) Configure(_ context.Context, host pluginsdk.Host, _ json.RawMessage) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.host = host
	return nil
}

func (d *dating) hostOf() pluginsdk.Host {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.host
}

func seeded() *plugintest.FakeHost {
	fh := plugintest.NewFakeHost()
	fh.SetRecords("demo", "finds", map[string]any{"code": "F1", "dated_from": 100}, map[string]any{"code": "F2", "dated_from": 200})
	fh.SetRecords("demo", "sites", map[string]any{"code": "S1"})
	fh.SetRecords("demo", "finds_samples", map[string]any{"code": "X1", "id_link": 1})
	return fh
}

// Per-actor rights: a table denied to the actor is refused at the gate
// (routes naming it) and by QueryRecords as the actor (the server's
// PermissionDenied, not_enough_privilege, answered 403 by
// WriteHostError); a row subset limits what it reads; an override that
// raises its level on a table counts for that table only.
func TestFakeHostRights(t *testing.T) {
	fh := seeded()
	h := plugintest.New(t, &dating{}, plugintest.WithHost(fh))
	denied, subset, editor := plugintest.Reader, plugintest.Reader, plugintest.Reader
	denied.UserID, subset.UserID, editor.UserID = 31, 32, 33
	fh.SetRights(denied, "finds", plugintest.Rights{Privilege: 40})
	fh.SetRights(subset, "finds", plugintest.Rights{Subset: map[string]any{"code": map[string]any{"_eq": "F2"}}})
	fh.SetRights(editor, "finds", plugintest.Rights{Privilege: pluginsdk.PrivilegeWriter})

	call := func(method, target string, a pluginsdk.Actor) string {
		resp, err := h.CallRoute(method, target, nil, a)
		if err != nil {
			t.Fatalf("%s %s: %v", method, target, err)
		}
		var body map[string]any
		if err := resp.JSON(&body); err != nil {
			t.Fatal(err)
		}
		if resp.Status != 200 {
			if strings.Contains(fmt.Sprint(body["message"]), "rpc error") {
				t.Errorf("%s %s: the rpc framing reached the client: %v", method, target, body)
			}
			return fmt.Sprintf("%d %v", resp.Status, body["code"])
		}
		return fmt.Sprintf("200 %v privilege %v", body["codes"], body["privilege"])
	}
	for _, c := range []struct {
		method, target string
		actor          pluginsdk.Actor
		want           string
	}{
		{"GET", "/dating/rows/finds", plugintest.Reader, "200 [F1 F2] privilege 30"},
		{"GET", "/dating/rows/finds", denied, "403 not_enough_privilege"},
		{"GET", "/dating/rows?tb=finds", denied, "403 not_enough_privilege"},
		{"GET", "/dating/rows?tb=sites,finds", denied, "403 not_enough_privilege"},
		{"GET", "/dating/rows?tb=sites", denied, "200 [S1] privilege 30"},
		// No table in the request: the gate lets it through, the Host
		// refuses the query as the actor.
		{"GET", "/dating/summary", denied, "403 not_enough_privilege"},
		{"GET", "/dating/summary", subset, "200 [F2] privilege 30"},
		{"GET", "/dating/rows?tb=finds", subset, "200 [F2] privilege 30"},
		{"GET", "/dating/rows/sites", subset, "200 [S1] privilege 30"},
		// A plugin table is no more open than its parent.
		{"GET", "/dating/rows/finds_samples", denied, "403 not_enough_privilege"},
		{"POST", "/dating/rows?tb=finds", editor, "200 [F1 F2] privilege 20"},
		{"POST", "/dating/rows?tb=sites", editor, "403 not_enough_privilege"},
		{"POST", "/dating/rows?tb=finds", plugintest.Reader, "403 not_enough_privilege"},
	} {
		if got := call(c.method, c.target, c.actor); got != c.want {
			t.Errorf("%s %s as user %d: %s, want %s", c.method, c.target, c.actor.UserID, got, c.want)
		}
	}
}

// Features inactive on a table: the plugin's query sees the table as
// the server shows it.
func TestFakeHostInactiveFeatures(t *testing.T) {
	fh := seeded()
	d := &dating{}
	plugintest.New(t, d, plugintest.WithHost(fh))
	fh.SetFeatures("demo", "finds") // none active
	query := func(in pluginsdk.QueryRecordsInput) ([]map[string]any, error) {
		in.App = "demo"
		rows, _, err := d.hostOf().QueryRecords(context.Background(), in)
		return rows, err
	}
	for _, c := range []struct {
		name string
		in   pluginsdk.QueryRecordsInput
		code string
	}{
		{"a column of the inactive feature", pluginsdk.QueryRecordsInput{Table: "finds", Columns: []string{"code", "dated_from"}}, "invalid_field"},
		{"a filter on it", pluginsdk.QueryRecordsInput{Table: "finds", Filter: map[string]any{"_or": []any{map[string]any{"dated_from": map[string]any{"_gt": 1}}}}}, "invalid_field"},
		{"its child table", pluginsdk.QueryRecordsInput{Table: "finds_samples"}, "table_not_found"},
	} {
		_, err := query(c.in)
		rec := httptest.NewRecorder()
		pluginsdk.WriteHostError(rec, err)
		if !strings.Contains(rec.Body.String(), `"code":"`+c.code+`"`) {
			t.Errorf("%s: %v → %s, want %s", c.name, err, rec.Body, c.code)
		}
	}
	rows, err := query(pluginsdk.QueryRecordsInput{Table: "finds"})
	if err != nil || len(rows) != 2 || rows[0]["dated_from"] != nil || rows[0]["code"] != "F1" {
		t.Errorf("every column: %v %v, want the rows without dated_from", rows, err)
	}
	fh.SetFeatures("demo", "finds", "dating", "samples")
	rows, err = query(pluginsdk.QueryRecordsInput{Table: "finds", Columns: []string{"dated_from"}, Filter: map[string]any{"dated_from": map[string]any{"_gt": 150}}})
	if err != nil || len(rows) != 1 || fmt.Sprint(rows[0]["dated_from"]) != "200" {
		t.Errorf("active: %v %v", rows, err)
	}
	if rows, err = query(pluginsdk.QueryRecordsInput{Table: "finds_samples"}); err != nil || len(rows) != 1 {
		t.Errorf("the child table of an active feature: %v %v", rows, err)
	}
}

// The harness's log lines (go-plugin's, the SDK's own such as a
// recovered panic's stack) go to the test's log, not to the process's
// stderr.
func TestHarnessLogsToTheTest(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, defaultOutput := os.Stderr, hclog.DefaultOutput
	os.Stderr, hclog.DefaultOutput = w, w
	var captured strings.Builder
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&captured, r); close(done) }()
	logged := &logRecorder{T: t}
	t.Run("harness", func(t *testing.T) {
		logged.T = t
		h := plugintest.New(logged, &dating{})
		if _, err := h.CallRoute("GET", "/dating/panic", nil, plugintest.Reader); !pluginsdk.IsPanic(err) {
			t.Errorf("panic route: %v", err)
		}
	})
	os.Stderr, hclog.DefaultOutput = stderr, defaultOutput
	w.Close()
	<-done
	if s := captured.String(); s != "" {
		t.Errorf("the harness wrote to stderr: %s", s)
	}
	if got := logged.all(); !strings.Contains(got, "plugin panicked") || !strings.Contains(got, "dating broke") {
		t.Errorf("the test's log lacks the panic: %s", got)
	}
}

// logRecorder keeps what is logged through it, besides logging it.
type logRecorder struct {
	*testing.T
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) Log(args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprint(args...))
	l.mu.Unlock()
	l.T.Log(args...)
}

func (l *logRecorder) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
