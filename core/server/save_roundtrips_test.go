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
// where it needs no answer in between: a create is the request's versions
// check, BEGIN with the insert, and the history with COMMIT; an update is
// the versions check, BEGIN with the row's lock and state, the version
// snapshot with the update and the new version's read, and the history
// with COMMIT. What the saves did is checked by the records tests on both
// engines; here, that it stays this many round trips.
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
		for _, c := range []struct {
			name, body string
			want       []string // what each round trip starts with
		}{
			{"create", `{"core":{"label":"x","weight":1}}`, []string{"SELECT (SELECT value", "batch: BEGIN; INSERT INTO", "batch: INSERT INTO " + `"` + f.app.DB.Schema() + `"."sys_history"`}},
			{"update", fmt.Sprintf(`{"id":%d,"core":{"weight":3}}`, id), []string{"SELECT (SELECT value", "batch: BEGIN; SELECT", "batch: INSERT INTO " + `"` + f.app.DB.Schema() + `"."sys_versions"`, "batch: INSERT INTO " + `"` + f.app.DB.Schema() + `"."sys_history"`}},
		} {
			send(c.body) // statements prepared on first use
			got := send(c.body)
			ok := len(got) == len(c.want)
			for i := 0; ok && i < len(got); i++ {
				ok = strings.HasPrefix(got[i], c.want[i])
			}
			if ok && !strings.HasSuffix(got[len(got)-1], "COMMIT;") {
				ok = false
			}
			if !ok {
				t.Errorf("%s: %d round trips, want %d:\n%s", c.name, len(got), len(c.want), strings.Join(got, "\n"))
			}
		}
	})
}
