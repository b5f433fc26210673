package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestPasswordChangeEndsSessions: a new password ends every session of
// the account (token_invalidated from the next request); the user who
// changed their own goes on with the token the answer carries; an admin
// changing someone's password ends that user's sessions, not the admin's.
func TestPasswordChangeEndsSessions(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		inst := testenv.NewInstance(t, e)
		dig := testenv.NewApp(t, inst.Apps, "dig")
		ann := testenv.NewUser(t, dig, "Ann", "ann@example.org", auth.Writer)
		h := inst.Server
		admin := testenv.Login(t, h, "dig", "admin@example.org", testenv.Password)
		laptop := testenv.Login(t, h, "dig", "ann@example.org", testenv.Password)
		tablet := testenv.Login(t, h, "dig", "ann@example.org", testenv.Password)

		status, body := testenv.Do(t, h, "POST", "/dig/api/user", fmt.Sprintf(`{"id":%d,"password":"a-brand-new-one"}`, ann.ID), testenv.Bearer(laptop))
		fresh, _ := body["token"].(string)
		if status != 200 || body["code"] != "user_data_saved" || fresh == "" {
			t.Fatalf("own password change: %d %v", status, body)
		}
		for _, tc := range []struct {
			name, token, code string
			status            int
		}{
			{"the other device", tablet, "token_invalidated", 401},
			{"the token that made the change", laptop, "token_invalidated", 401},
			{"the token in the answer", "Bearer " + fresh, "", 200},
			{"the admin", admin, "", 200},
		} {
			status, body := testenv.Do(t, h, "GET", "/dig/api/info/app", "", testenv.Bearer(tc.token))
			if status != tc.status || (tc.code != "" && body["code"] != tc.code) {
				t.Errorf("%s: %d %v, want %d %s", tc.name, status, body, tc.status, tc.code)
			}
		}

		// An admin sets Ann's password: her sessions end, the admin's do not,
		// and the admin's answer carries no token.
		ann2 := testenv.Login(t, h, "dig", "ann@example.org", "a-brand-new-one")
		status, body = testenv.Do(t, h, "POST", "/dig/api/user", fmt.Sprintf(`{"id":%d,"password":"set-by-the-admin"}`, ann.ID), testenv.Bearer(admin))
		if status != 200 || body["token"] != nil {
			t.Fatalf("admin sets a password: %d %v", status, body)
		}
		if status, body := testenv.Do(t, h, "GET", "/dig/api/info/app", "", testenv.Bearer(ann2)); status != 401 || body["code"] != "token_invalidated" {
			t.Errorf("Ann after the admin's change: %d %v", status, body)
		}
		if status, _ := testenv.Do(t, h, "GET", "/dig/api/info/app", "", testenv.Bearer(admin)); status != 200 {
			t.Errorf("admin after changing Ann's password: %d", status)
		}
		// A change that sends no password ends nothing.
		ann3 := testenv.Login(t, h, "dig", "ann@example.org", "set-by-the-admin")
		testenv.Do(t, h, "POST", "/dig/api/user", fmt.Sprintf(`{"id":%d,"name":"Ann B","password":""}`, ann.ID), testenv.Bearer(ann3))
		if status, _ := testenv.Do(t, h, "GET", "/dig/api/info/app", "", testenv.Bearer(ann3)); status != 200 {
			t.Errorf("after a change without a password: %d", status)
		}
	})
}
