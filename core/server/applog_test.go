package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestApplicationLog: sign-ins (and failures), changes other than record
// saves, the filters, privileges, purge; never a password in it.
func TestApplicationLog(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		const secret = "Wrong-Password-Not-In-Log-123"
		if code, _ := f.do(t, "", "POST", api+"/auth/login", fmt.Sprintf(`{"email":"Admin@Example.org","password":%q}`, secret)); code != 401 {
			t.Fatalf("failed sign-in: %d", code)
		}
		site := f.create(t, f.writer, "sites", `{"name":"Logged"}`) // a save: not logged
		f.must(t, 200, f.super, "POST", api+"/vocabularies", `{"voc":"periodo","def":"Arcaico"}`)
		f.must(t, 200, f.writer, "DELETE", fmt.Sprintf("%s/record/sites/%d", api, site), "")

		list := func(query string) (int, map[string]any) { return f.do(t, f.super, "GET", api+"/logs"+query, "") }
		code, m := list("?per_page=100")
		if code != 200 {
			t.Fatalf("logs: %d %v", code, m)
		}
		var actions []string
		for _, x := range m["data"].([]any) {
			actions = append(actions, x.(map[string]any)["action"].(string))
		}
		all := strings.Join(actions, " | ")
		for _, want := range []string{"auth.login_failed", "auth.login", "POST /vocabularies", "DELETE /record/{tb}/{id}"} {
			if !strings.Contains(all, want) {
				t.Fatalf("no %q in %s", want, all)
			}
		}
		if strings.Contains(all, "POST /record/{tb}") {
			t.Fatalf("a record save was logged: %s", all)
		}
		_, raw := f.do(t, f.super, "GET", api+"/logs?per_page=500", "")
		if s := fmt.Sprint(raw); strings.Contains(s, secret) || strings.Contains(s, testenv.Password) {
			t.Fatal("a password reached the log")
		}

		cases := []struct {
			name, query string
			check       func(data []any) bool
		}{
			{"warnings only", "?level=warning", func(d []any) bool {
				return len(d) == 1 && d[0].(map[string]any)["action"] == "auth.login_failed" && d[0].(map[string]any)["user"] == "admin@example.org" &&
					d[0].(map[string]any)["level"] == float64(300) && d[0].(map[string]any)["level_name"] == "WARNING"
			}},
			{"level as a number", "?level=300", func(d []any) bool { return len(d) == 1 }},
			{"by action", "?action=vocabularies", func(d []any) bool { return len(d) == 1 }},
			{"by user", "?user=writer", func(d []any) bool {
				for _, x := range d {
					if x.(map[string]any)["action"] == "DELETE /record/{tb}/{id}" && x.(map[string]any)["tb"] == "sites" &&
						x.(map[string]any)["record_id"] == fmt.Sprint(site) {
						return true
					}
				}
				return false
			}},
			{"limit", "?limit=1", func(d []any) bool { return len(d) == 1 }},
			{"a future window", "?from=2999-01-01", func(d []any) bool { return len(d) == 0 }},
		}
		for _, tc := range cases {
			code, m := list(tc.query)
			if code != 200 || !tc.check(m["data"].([]any)) {
				t.Fatalf("%s: %d %v", tc.name, code, m["data"])
			}
		}
		for _, q := range []string{"?level=loud", "?page=0", "?per_page=x", "?from=yesterday"} {
			if code, m := list(q); code != 400 || m["code"] != "invalid_parameter" {
				t.Fatalf("%s: %d %v", q, code, m)
			}
		}
		if code, _ := f.do(t, f.writer, "GET", api+"/logs", ""); code != 403 {
			t.Fatalf("writer reads the log: %d", code)
		}
		if code, _ := f.do(t, f.reader, "POST", api+"/logs/purge", `{"days":0}`); code != 403 {
			t.Fatalf("reader purges: %d", code)
		}
		if code, m := f.do(t, f.super, "POST", api+"/logs/purge", `{"days":-1}`); code != 400 {
			t.Fatalf("negative days: %d %v", code, m)
		}
		// Purging everything older than now keeps only the purge's own entry.
		code, m = f.do(t, f.super, "POST", api+"/logs/purge", `{"days":"0"}`)
		if code != 200 || m["code"] != "log_purge_success" || m["days"] != float64(0) || m["deleted"].(float64) < 4 {
			t.Fatalf("purge: %d %v", code, m)
		}
		_, m = list("")
		if m["total"] != float64(1) || m["data"].([]any)[0].(map[string]any)["action"] != "POST /logs/purge" {
			t.Fatalf("after purge: %v", m)
		}
		// Default: 30 days.
		if code, m := f.do(t, f.super, "POST", api+"/logs/purge", ""); code != 200 || m["days"] != float64(30) {
			t.Fatalf("default purge: %d %v", code, m)
		}
	})
}

// TestLogPurgeIsAdmins: SPEC §3 gives /logs/purge to admins, as /logs:
// an admin (not super_admin) purges; below admin, 403 not_enough_privilege
// and nothing is purged.
func TestLogPurgeIsAdmins(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		f := newDig(t, e)
		testenv.NewUser(t, f.app, "Admin2", "admin2@example.org", auth.Admin)
		admin := testenv.Login(t, f.inst.Server, "dig", "admin2@example.org", testenv.Password)
		for _, c := range []struct {
			name, who string
			status    int
			code      string
		}{
			{"reader", f.reader, 403, "not_enough_privilege"},
			{"writer", f.writer, 403, "not_enough_privilege"},
			{"writer's API key", f.writerKey, 403, "not_enough_privilege"},
			{"admin", admin, 200, "log_purge_success"},
			{"super_admin", f.super, 200, "log_purge_success"},
		} {
			code, m := f.do(t, c.who, "POST", "/dig/api/logs/purge", `{"days":0}`)
			if code != c.status || m["code"] != c.code {
				t.Fatalf("%s: %d %v", c.name, code, m)
			}
		}
	})
}
