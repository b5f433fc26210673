package server_test

import (
	"net/http"
	"testing"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestAccessChangedBehindTheServerIsSeen: accounts are cached by the auth
// version that database triggers move, so a change the server did not make
// itself (another node, the command line, a restore) decides the very next
// request, as when the account was read on every request (CONTRACT §3).
func TestAccessChangedBehindTheServerIsSeen(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newUserAdminEnv(t, e)
		db := env.app.DB
		ctx := t.Context()
		authVersion := func() int64 {
			t.Helper()
			n, err := db.Counters(ctx, auth.SettingAuthVersion)
			if err != nil {
				t.Fatal(err)
			}
			return n[0]
		}
		exec := func(q string, args ...any) {
			t.Helper()
			before := authVersion()
			if _, err := db.Exec(ctx, q, args...); err != nil {
				t.Fatal(err)
			}
			if after := authVersion(); after <= before {
				t.Fatalf("%s: auth version %d → %d, want it moved", q, before, after)
			}
		}
		steps := []struct {
			name   string
			change func()
			status int
			code   string
		}{
			{"writer is not admin", nil, http.StatusForbidden, ""},
			{"promoted in the database", func() {
				exec(`UPDATE `+db.Sys("users")+` SET privilege = ? WHERE id = ?`, auth.Admin, env.writer.ID)
			}, http.StatusOK, ""},
			{"demoted again", func() {
				exec(`UPDATE `+db.Sys("users")+` SET privilege = ? WHERE id = ?`, auth.Writer, env.writer.ID)
			}, http.StatusForbidden, ""},
			{"an override moves the version", func() {
				exec(`INSERT INTO `+db.Sys("table_privileges")+` (user_id, table_name, privilege, created_at, updated_at) VALUES (?, 'finds', 30, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`, env.writer.ID)
			}, http.StatusForbidden, ""},
			{"token version bumped", func() {
				exec(`UPDATE `+db.Sys("users")+` SET token_version = token_version + 1 WHERE id = ?`, env.writer.ID)
			}, http.StatusUnauthorized, "token_invalidated"},
		}
		for _, st := range steps {
			if st.change != nil {
				st.change()
			}
			status, body := env.do(t, env.writeTok, "GET", "/migrations", "")
			if status != st.status || (st.code != "" && body["code"] != st.code) {
				t.Fatalf("%s: %d %v, want %d %s", st.name, status, body, st.status, st.code)
			}
		}
		// A deleted account's token stops working at once.
		adminBefore := testenv.Scenario{URL: digAPI + "/info/app", Headers: testenv.Bearer(env.adminTok), ExpectedStatus: 200}
		adminBefore.Run(t, env.inst.Server)
		exec(`DELETE FROM `+db.Sys("users")+` WHERE id = ?`, env.admin.ID)
		testenv.Scenario{URL: digAPI + "/info/app", Headers: testenv.Bearer(env.adminTok), ExpectedStatus: 401,
			ExpectedContent: []string{`"user_deleted"`}}.Run(t, env.inst.Server)
	})
}
