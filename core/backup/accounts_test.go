package backup_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// A restore brings the data back, not the power the accounts had at the
// backup: over HTTP, a super admin demoted after the backup stays
// demoted, sessions and API keys revoked after it stay refused, an
// account made after it stays; restore_accounts (a super admin's choice
// only) brings the old privileges back, still without reviving a revoked
// credential.
func TestRestoreKeepsLiveAccounts(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		inst := testenv.NewInstanceWithJobs(t, e)
		a := testenv.NewApp(t, inst.Apps, "dig")
		boss := testenv.NewUser(t, a, "Boss", "boss@example.org", auth.SuperAdmin)
		reader := testenv.NewUser(t, a, "Reader", "reader@example.org", auth.Reader)
		testenv.NewUser(t, a, "Adm", "adm@example.org", auth.Admin)
		keyBearer := testenv.NewAPIKey(t, a, auth.Writer)
		h := inst.Server
		admin := testenv.Bearer(testenv.Login(t, h, "dig", "admin@example.org", testenv.Password))
		adm := testenv.Bearer(testenv.Login(t, h, "dig", "adm@example.org", testenv.Password))
		bossOld := testenv.Bearer(testenv.Login(t, h, "dig", "boss@example.org", testenv.Password))
		readerOld := testenv.Bearer(testenv.Login(t, h, "dig", "reader@example.org", testenv.Password))
		key := testenv.Bearer(keyBearer)

		rec := testenv.Scenario{Name: "backup", Method: "POST", URL: "/dig/api/backups", Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{`"code":"ok_backup"`}}.Run(t, h)
		var created struct{ File string }
		if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || created.File == "" {
			t.Fatalf("backup: %s", rec.Body)
		}

		// After the backup: the boss is demoted, the reader's sessions and
		// the API key are revoked, a new account is made.
		testenv.Scenario{Name: "demote", Method: "POST", URL: "/dig/api/user", Headers: admin,
			Body: fmt.Sprintf(`{"id": %d, "privilege": %d}`, boss.ID, auth.Reader), ExpectedStatus: 200}.Run(t, h)
		testenv.Scenario{Name: "revoke sessions", Method: "POST", URL: fmt.Sprintf("/dig/api/user/%d/revoke", reader.ID), Headers: admin,
			ExpectedStatus: 200}.Run(t, h)
		var keyID int64
		if err := a.DB.QueryRow(t.Context(), `SELECT id FROM `+a.DB.Sys("api_keys")).Scan(&keyID); err != nil {
			t.Fatal(err)
		}
		testenv.Scenario{Name: "revoke key", Method: "POST", URL: fmt.Sprintf("/dig/api/api-key/%d/revoke", keyID), Headers: admin,
			ExpectedStatus: 200}.Run(t, h)
		testenv.Scenario{Name: "new account", Method: "POST", URL: "/dig/api/user", Headers: admin,
			Body: `{"name": "Late", "email": "late@example.org", "password": "` + testenv.Password + `", "privilege": 20}`, ExpectedStatus: 200}.Run(t, h)
		bossNow := testenv.Bearer(testenv.Login(t, h, "dig", "boss@example.org", testenv.Password))

		refused := func(when string) {
			t.Helper()
			for _, s := range []testenv.Scenario{
				{Name: when + ": the demoted boss is no admin", Method: "GET", URL: "/dig/api/users", Headers: bossNow, ExpectedStatus: 403},
				{Name: when + ": the boss's old session", Method: "GET", URL: "/dig/api/users", Headers: bossOld, ExpectedStatus: 401, ExpectedContent: []string{"token_invalidated"}},
				{Name: when + ": the reader's revoked session", Method: "GET", URL: "/dig/api/auth/refresh", Headers: readerOld, ExpectedStatus: 401, ExpectedContent: []string{"token_invalidated"}},
				{Name: when + ": the revoked key", Method: "GET", URL: "/dig/api/auth/refresh", Headers: key, ExpectedStatus: 401},
			} {
				s.Run(t, h)
			}
		}
		refused("before the restore")

		restore := "/dig/api/backup/" + created.File + "/restore"
		testenv.Scenario{Name: "restore keeps the accounts", Method: "POST", URL: restore, Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{`"code":"ok_backup_restored"`, `"accounts":"kept"`}}.Run(t, h)
		refused("after a restore")
		testenv.Scenario{Name: "the account made after the backup stays", Method: "GET", URL: "/dig/api/auth/refresh",
			Headers: testenv.Bearer(testenv.Login(t, h, "dig", "late@example.org", testenv.Password)), ExpectedStatus: 200}.Run(t, h)

		for _, s := range []testenv.Scenario{
			{Name: "restore_accounts is a super admin's", Method: "POST", URL: restore, Headers: adm, Body: `{"restore_accounts": true}`,
				ExpectedStatus: 403, ExpectedContent: []string{"restore_accounts_super_admin"}},
			{Name: "restore_accounts is a boolean", Method: "POST", URL: restore, Headers: admin, Body: `{"restore_accounts": "maybe"}`,
				ExpectedStatus: 400, ExpectedContent: []string{"invalid_json"}},
		} {
			s.Run(t, h)
		}

		// Asked for, the accounts come back as archived (the boss is super
		// admin again, the late account is gone), but revoked credentials
		// stay refused. A form works as JSON does.
		req := httptest.NewRequest("POST", restore, strings.NewReader("restore_accounts=1"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", admin["Authorization"])
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"accounts":"restored"`) {
			t.Fatalf("restore with accounts: %d %s", w.Code, w.Body)
		}
		for _, s := range []testenv.Scenario{
			{Name: "the boss's old session still refused", Method: "GET", URL: "/dig/api/users", Headers: bossOld, ExpectedStatus: 401, ExpectedContent: []string{"token_invalidated"}},
			{Name: "the reader's revoked session still refused", Method: "GET", URL: "/dig/api/auth/refresh", Headers: readerOld, ExpectedStatus: 401, ExpectedContent: []string{"token_invalidated"}},
			{Name: "the revoked key still refused", Method: "GET", URL: "/dig/api/auth/refresh", Headers: key, ExpectedStatus: 401},
			{Name: "the boss is super admin again, as asked", Method: "GET", URL: "/dig/api/users",
				Headers: testenv.Bearer(testenv.Login(t, h, "dig", "boss@example.org", testenv.Password)), ExpectedStatus: 200},
		} {
			s.Run(t, h)
		}
	})
}
