package server_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestSaveRoundTrips: on PostgreSQL a save sends its statements together
// where it needs no answer in between, and runs on the app's versions as
// the server last saw them, checked by its transaction's first statement
// (readonly.go): a create is BEGIN with the versions check and the
// insert, then the history with COMMIT; an update is BEGIN with the
// versions check and the row's state, locked by its own statement, then
// the version snapshot (whose id is the new version, RETURNING) with the
// update, the history and COMMIT. Neither notifies other nodes in the
// transaction (that serializes commits): they are told after it.
// What the saves did is checked by the records tests on both engines, and
// that a save sees what changed behind the server by
// TestSavesOnAssumedVersionsSeeChangesBehindTheServer; here, that it
// stays this many round trips.
func TestSaveRoundTrips(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		if e != store.Postgres {
			t.Skip("round trips are PostgreSQL's")
		}
		t.Parallel()
		f := newDig(t, e)
		id := f.create(t, f.writer, "finds", `{"label":"amph","weight":12.5}`)
		send := func(body string) []string {
			t.Helper()
			var st store.Statements
			req := httptest.NewRequest("POST", "/dig/api/record/finds", strings.NewReader(body))
			req.Header.Set("Authorization", f.writer)
			req = req.WithContext(store.TraceStatements(req.Context(), &st))
			rec := httptest.NewRecorder()
			f.inst.Server.ServeHTTP(rec, req)
			if rec.Code != 200 {
				t.Fatalf("%s: %d %s", body, rec.Code, rec.Body.String())
			}
			return st.Sent()
		}
		table := func(name string) string { return `"` + f.app.DB.Schema() + `"."` + name + `"` }
		versions := "SELECT (SELECT value FROM " + table("sys_settings")
		for _, c := range []struct {
			name, body string
			want       [][]string // each round trip: how it starts, then what it holds, in order
			not        []string   // statements it no longer sends
		}{
			{"create", `{"core":{"label":"x","weight":1}}`, [][]string{
				{"batch: BEGIN; " + versions, "; INSERT INTO " + table("finds")},
				{"batch: INSERT INTO " + table("sys_history"), "; COMMIT;"},
			}, []string{
				// Other nodes are told after the commit (changes/notify.go).
				"pg_notify",
			}},
			{"update", fmt.Sprintf(`{"id":%d,"core":{"weight":3}}`, id), [][]string{
				{"batch: BEGIN; " + versions, "; SELECT " + table("finds") + `."id", ` + table("finds") + `."creator"`, ` FOR UPDATE OF "finds";`},
				{"batch: INSERT INTO " + table("sys_versions"), " RETURNING id; UPDATE " + table("finds"), "; INSERT INTO " + table("sys_history"), "; COMMIT;"},
			}, []string{
				// The row's lock in a statement of its own, and the new
				// version read after the snapshot.
				"; SELECT " + table("finds") + `."creator" FROM`,
				"; SELECT COALESCE(MAX(id), 0) FROM " + table("sys_versions"),
				"pg_notify",
			}},
		} {
			send(c.body) // statements prepared on first use
			got := send(c.body)
			ok := len(got) == len(c.want)
			for i := 0; ok && i < len(got); i++ {
				ok = strings.HasPrefix(got[i], c.want[i][0])
				rest := got[i][len(c.want[i][0]):]
				for _, part := range c.want[i][1:] {
					at := strings.Index(rest, part)
					if !ok || at < 0 {
						ok = false
						break
					}
					rest = rest[at+len(part):]
				}
			}
			for _, stmt := range c.not {
				ok = ok && !strings.Contains(strings.Join(got, "\n"), stmt)
			}
			if !ok {
				t.Errorf("%s: %d round trips, want %d:\n%s", c.name, len(got), len(c.want), strings.Join(got, "\n"))
			}
		}
	})
}
