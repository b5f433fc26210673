package fieldsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// testHold is the wait of the fixture's instance (STRATA_SYNC_HOLD).
const testHold = time.Minute

// clock is the server's clock, moved by the test (hold expiry).
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// syncFixture is an app with units and finds (a find points at its unit)
// and two field workers, ann and bob, each with a device.
type syncFixture struct {
	inst           *testenv.Instance
	app            *apps.App
	clock          *clock
	super, ann, bo string // bearer values
}

func newSync(t *testing.T, e store.Engine) *syncFixture {
	t.Helper()
	c := &clock{now: time.Now().UTC()}
	inst := testenv.NewInstanceWithClock(t, e, c.Now, func(cfg *config.Config) { cfg.SyncHold = testHold })
	a := testenv.NewApp(t, inst.Apps, "dig")
	ctx, now := context.Background(), time.Now().UTC()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "units", Label: "Units"}, now)
	must(err)
	_, err = schema.AddField(ctx, a.DB, "units", schema.FieldDef{Name: "code", Label: "Code", Required: true}, now)
	must(err)
	_, err = schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds", Label: "Finds"}, now)
	must(err)
	for _, f := range []schema.FieldDef{{Name: "label", Label: "Label", Required: true}, {Name: "notes", Label: "Notes"},
		{Name: "weight", Label: "Weight", DBType: "float"}, {Name: "unit", Label: "Unit", Type: "select", IDFromTb: "units"}} {
		_, err = schema.AddField(ctx, a.DB, "finds", f, now)
		must(err)
	}
	f := &syncFixture{inst: inst, app: a, clock: c}
	f.super = testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
	for _, u := range []struct {
		dst   *string
		email string
	}{{&f.ann, "ann@example.org"}, {&f.bo, "bob@example.org"}} {
		testenv.NewUser(t, a, u.email, u.email, auth.Writer)
		*u.dst = testenv.Login(t, inst.Server, "dig", u.email, testenv.Password)
	}
	return f
}

// do sends a request as who.
func (f *syncFixture) do(t *testing.T, who, method, url, body string) (int, map[string]any) {
	t.Helper()
	return testenv.Do(t, f.inst.Server, method, url, body, testenv.Bearer(who))
}

// must is do expecting status want.
func (f *syncFixture) must(t *testing.T, want int, who, method, url, body string) map[string]any {
	t.Helper()
	code, m := f.do(t, who, method, url, body)
	if code != want {
		t.Fatalf("%s %s: %d, want %d: %v", method, url, code, want, m)
	}
	return m
}

// create makes a record through the record API and returns its id.
func (f *syncFixture) create(t *testing.T, tb, core string) int64 {
	t.Helper()
	m := f.must(t, 200, f.super, "POST", "/dig/api/record/"+tb, `{"core":`+core+`}`)
	return int64(m["id"].(float64))
}

// mut is a mutation: device, seq, table, then key, value pairs.
func mut(device string, seq int, table string, kv ...any) map[string]any {
	m := map[string]any{"mutation_id": fmt.Sprintf("%s-%d-%s", device, seq, table), "device_id": device, "seq": seq, "table": table}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// push sends mutations as who and returns the answer (200 expected).
func (f *syncFixture) push(t *testing.T, who string, ms ...map[string]any) pushAnswer {
	t.Helper()
	code, m := f.pushRaw(t, who, ms...)
	if code != 200 {
		t.Fatalf("push: %d %v", code, m)
	}
	return answerOf(t, m, len(ms))
}

// pushRaw sends mutations as who; it only reports (t.Errorf), so it may
// run on another goroutine.
func (f *syncFixture) pushRaw(t *testing.T, who string, ms ...map[string]any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"mutations": ms})
	return f.do(t, who, "POST", "/dig/api/sync/push", string(b))
}

// answerOf decodes a push's answer of n results.
func answerOf(t *testing.T, m map[string]any, n int) pushAnswer {
	t.Helper()
	var out pushAnswer
	raw, _ := json.Marshal(m)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != n {
		t.Fatalf("%d results for %d mutations: %v", len(out.Results), n, m)
	}
	return out
}

type pushAnswer struct {
	Results []pushResult     `json:"results"`
	TempIDs map[string]int64 `json:"temp_ids"`
}

type pushResult struct {
	MutationID string  `json:"mutation_id"`
	Status     string  `json:"status"`
	Table      string  `json:"table"`
	ID         int64   `json:"id"`
	TempID     string  `json:"temp_id"`
	Version    *int64  `json:"version"`
	Conflicts  []int64 `json:"conflicts"`
	Code       string  `json:"code"`
	Message    string  `json:"message"`
	Fields     any     `json:"fields"`
	PathText   string  `json:"path_text"`
}

// field is a record's field value as GET /record shows it.
func (f *syncFixture) field(t *testing.T, tb string, id int64, name string) any {
	t.Helper()
	m := f.must(t, 200, f.super, "GET", fmt.Sprintf("/dig/api/record/%s/%d", tb, id), "")
	return m["core"].(map[string]any)[name].(map[string]any)["val"]
}

// count is a COUNT(*) of a system table's rows matching where.
func (f *syncFixture) count(t *testing.T, table, where string, args ...any) int {
	t.Helper()
	var n int
	if err := f.app.DB.QueryRow(context.Background(), `SELECT COUNT(*) FROM `+f.app.DB.Sys(table)+` WHERE `+where, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// conflicts lists GET /sync/conflicts as who.
func (f *syncFixture) conflicts(t *testing.T, who, query string) []map[string]any {
	t.Helper()
	m := f.must(t, 200, who, "GET", "/dig/api/sync/conflicts"+query, "")
	var out []map[string]any
	for _, c := range m["conflicts"].([]any) {
		out = append(out, c.(map[string]any))
	}
	return out
}
