package fieldsync_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// userID is the id of the account with email, as GET /users lists it.
func (f *syncFixture) userID(t *testing.T, email string) int64 {
	t.Helper()
	for _, u := range f.must(t, 200, f.super, "GET", "/dig/api/users", "")["users"].([]any) {
		if u.(map[string]any)["email"] == email {
			return int64(u.(map[string]any)["id"].(float64))
		}
	}
	t.Fatalf("no user %s", email)
	return 0
}

// offlineTables is GET /sync/offline-tables as who: table → filter (JSON).
func (f *syncFixture) offlineTables(t *testing.T, who string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range f.must(t, 200, who, "GET", "/dig/api/sync/offline-tables", "")["tables"].([]any) {
		m := e.(map[string]any)
		filter := ""
		if m["filter"] != nil {
			filter = fmt.Sprint(m["filter"])
		}
		out[m["table"].(string)] = filter
	}
	return out
}

// An admin sets the defaults; each user reads those of the tables they may
// read, filters as set; a user denied a table does not get it.
func TestOfflineTablesDefaults(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		if got := f.offlineTables(t, f.ann); len(got) != 0 {
			t.Fatalf("defaults before any were set: %v", got)
		}
		f.must(t, 200, f.super, "PUT", "/dig/api/sync/offline-tables",
			`{"tables":[{"table":"units"},{"table":"finds","filter":{"label":{"_eq":"F1"}}}]}`)
		f.must(t, 200, f.super, "POST", fmt.Sprintf("/dig/api/user/%d/privileges", f.userID(t, "bob@example.org")),
			`{"table_name":"finds","privilege":40}`)
		bob := testenv.Login(t, f.inst.Server, "dig", "bob@example.org", testenv.Password)
		for _, c := range []struct {
			name, who string
			want      map[string]string
		}{
			{"ann reads both", f.ann, map[string]string{"units": "", "finds": "map[label:map[_eq:F1]]"}},
			{"bob is denied finds", bob, map[string]string{"units": ""}},
		} {
			if got := f.offlineTables(t, c.who); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
		// A filter that no longer validates (its field dropped): left out.
		f.must(t, 200, f.super, "PUT", "/dig/api/sync/offline-tables", `{"tables":[{"table":"units"},{"table":"finds","filter":{"notes":{"_eq":"x"}}}]}`)
		if _, err := schema.DeleteField(context.Background(), f.app.DB, "finds", "notes", false, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if got := f.offlineTables(t, f.ann); fmt.Sprint(got) != "map[units:]" {
			t.Errorf("with a filter on a dropped field: %v", got)
		}
		// An empty list clears them.
		f.must(t, 200, f.super, "PUT", "/dig/api/sync/offline-tables", `{"tables":[]}`)
		if got := f.offlineTables(t, f.ann); len(got) != 0 {
			t.Errorf("after clearing: %v", got)
		}
	})
}

// A bad table or filter is refused with a code, and nothing is stored; a
// non-admin may not set the defaults.
func TestOfflineTablesRefused(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		const good = `{"tables":[{"table":"units"}]}`
		f.must(t, 200, f.super, "PUT", "/dig/api/sync/offline-tables", good)
		many := make([]string, 101)
		for i := range many {
			many[i] = `{"table":"units"}`
		}
		for _, c := range []struct {
			name, who, body string
			status          int
			code            string
		}{
			{"non-admin", f.ann, good, 403, "not_enough_privilege"},
			{"unknown table", f.super, `{"tables":[{"table":"units"},{"table":"nope"}]}`, 404, "table_not_found"},
			{"unknown field in filter", f.super, `{"tables":[{"table":"finds","filter":{"nope":{"_eq":1}}}]}`, 400, ""},
			{"bad operator", f.super, `{"tables":[{"table":"finds","filter":{"label":{"_bogus":1}}}]}`, 400, ""},
			{"twice", f.super, `{"tables":[{"table":"units"},{"table":"units"}]}`, 400, "sync_invalid_offline_tables"},
			{"no table", f.super, `{"tables":[{"filter":{}}]}`, 400, "sync_invalid_offline_tables"},
			{"too many", f.super, `{"tables":[` + strings.Join(many, ",") + `]}`, 400, "sync_invalid_offline_tables"},
			{"wrong type", f.super, `{"tables":"units"}`, 400, ""},
			{"bad json", f.super, `{"tables":[`, 400, "invalid_json"},
		} {
			code, m := f.do(t, c.who, "PUT", "/dig/api/sync/offline-tables", c.body)
			got, _ := m["code"].(string)
			if code != c.status || got == "" || (c.code != "" && got != c.code) {
				t.Errorf("%s: %d %v, want %d %s", c.name, code, m, c.status, c.code)
			}
		}
		if got := f.offlineTables(t, f.super); fmt.Sprint(got) != "map[units:]" {
			t.Errorf("stored after refusals: %v", got)
		}
	})
}
