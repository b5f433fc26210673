package pluginhost_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// A plugin route whose table comes from the query (?tb=, the default
// table parameter, or the parameter its manifest names) is gated per
// table exactly as one with a :tb path parameter: a caller denied the
// table gets the server's 403 before the plugin is called, a row subset
// holds, an override that raises the caller's level on the table counts,
// and several tables give the least of the levels.
func TestPluginRouteTableFromQuery(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), func(o *pluginhost.Options) { o.MinBackoff, o.MaxBackoff = time.Minute, time.Minute })
		for _, code := range []string{"F0", "F1", "F2"} {
			f.json("POST", "/digs/api/record/finds", `{"core":{"code":"`+code+`"}}`, f.writer, 200)
		}
		f.json("POST", "/digs/api/record/plain", `{"core":{"code":"P0"}}`, f.writer, 200)
		reader := func(email, override string) string {
			u := testenv.NewUser(t, f.app, email, email, auth.Reader)
			f.json("POST", fmt.Sprintf("/digs/api/user/%d/privileges", u.ID), override, f.super, 200)
			return testenv.Login(t, f.srv, "digs", email, testenv.Password)
		}
		denied := reader("denied@example.org", `{"table_name":"finds","privilege":40}`)
		subset := reader("subset@example.org", `{"table_name":"finds","privilege":30,"subset":{"code":{"_eq":"F1"}}}`)
		editor := reader("editor@example.org", `{"table_name":"finds","privilege":20}`)

		answer := func(method, url, token string) string {
			rec := f.do(method, url, "", token)
			m := map[string]any{}
			if rec.Code == 200 {
				m = testenv.CheckEnvelope(t, rec)
				return fmt.Sprintf("200 %v privilege %v", m["codes"], m["privilege"])
			}
			status, code := f.code(method, url, "", token)
			return fmt.Sprintf("%d %s", status, code)
		}
		for _, c := range []struct {
			who, token string
			want       string
		}{
			{"reader", f.reader, "200 [F0 F1 F2] privilege 30"},
			{"denied", denied, "403 not_enough_privilege"},
			{"subset", subset, "200 [F1] privilege 30"},
			{"editor", editor, "200 [F0 F1 F2] privilege 20"},
		} {
			// The path parameter is the reference; the query forms must
			// answer the same.
			for _, url := range []string{"/digs/api/testplug/rows/finds", "/digs/api/testplug/rows?tb=finds", "/digs/api/testplug/named?table=finds"} {
				if got := answer("GET", url, c.token); got != c.want {
					t.Errorf("%s GET %s: %s, want %s", c.who, url, got, c.want)
				}
			}
		}
		for _, c := range []struct {
			method, url, token string
			want               string
		}{
			// Several tables: the least level of them.
			{"GET", "/digs/api/testplug/rows?tb=plain,finds", denied, "403 not_enough_privilege"},
			{"GET", "/digs/api/testplug/rows?tb=plain&tb=finds", denied, "403 not_enough_privilege"},
			{"GET", "/digs/api/testplug/rows?tb=plain", denied, "200 [P0] privilege 30"},
			// The declared parameter is the one gated; ?tb= is then only
			// data for that route.
			{"GET", "/digs/api/testplug/named?table=plain&tb=finds", denied, "200 [P0] privilege 30"},
			// An override that raises the caller on the table lets an
			// edit route through for that table only.
			{"POST", "/digs/api/testplug/rows?tb=finds", editor, "200 [F0 F1 F2] privilege 20"},
			{"POST", "/digs/api/testplug/rows?tb=plain", editor, "403 not_enough_privilege"},
			{"POST", "/digs/api/testplug/rows?tb=finds,plain", editor, "403 not_enough_privilege"},
		} {
			if got := answer(c.method, c.url, c.token); got != c.want {
				t.Errorf("%s %s: %s, want %s", c.method, c.url, got, c.want)
			}
		}
		if strings.Contains(f.logs.String(), "panic") {
			t.Errorf("the log shows a panic")
		}
	})
}
