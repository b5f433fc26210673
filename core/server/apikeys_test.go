package server_test

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// keysByID decodes GET /api-keys.
func keysByID(t *testing.T, body map[string]any) map[int64]map[string]any {
	t.Helper()
	list, ok := body["keys"].([]any)
	if !ok {
		t.Fatalf("no keys array in %v", body)
	}
	out := map[int64]map[string]any{}
	for _, k := range list {
		m := k.(map[string]any)
		out[int64(m["id"].(float64))] = m
	}
	return out
}

var plainKeyShape = regexp.MustCompile(`^svc_[A-Za-z0-9_-]{43,}$`)

func TestAPIKeyLifecycle(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newUserAdminEnv(t, e)
		h := env.inst.Server

		status, body := env.do(t, env.adminTok, "POST", "/api-keys", `{"label":" importer ","privilege":"20"}`)
		if status != http.StatusOK || body["label"] != "importer" || body["privilege"] != float64(20) {
			t.Fatalf("create: %d %v", status, body)
		}
		// A level may be given by name, as scripts written for BraDypUS do.
		if st, b := env.do(t, env.adminTok, "POST", "/api-keys", `{"label":"viewer","privilege":"read"}`); st != http.StatusOK || b["privilege"] != float64(30) {
			t.Fatalf("create by name: %d %v", st, b)
		} else if st, _ := env.do(t, env.adminTok, "DELETE", fmt.Sprintf("/api-key/%v", b["id"]), ""); st != http.StatusOK {
			t.Fatalf("delete the key made by name: %d", st)
		}
		plain, _ := body["key"].(string)
		if !plainKeyShape.MatchString(plain) {
			t.Fatalf("key %q is not svc_ + 43 url-safe characters", plain)
		}
		id := int64(body["id"].(float64))
		stored, err := auth.FindAPIKey(t.Context(), env.app.DB, plain)
		if err != nil || stored.ID != id || stored.CreatedBy == nil || *stored.CreatedBy != env.admin.ID || stored.KeyHash == plain {
			t.Fatalf("stored key %+v, %v", stored, err)
		}

		// Listed without its secret, unused so far.
		list := testenv.Scenario{URL: digAPI + "/api-keys", Headers: testenv.Bearer(env.adminTok), ExpectedStatus: 200,
			NotExpectedContent: []string{plain, auth.HashAPIKey(plain), "key_hash", `"key":`}}
		body = testenv.CheckEnvelope(t, list.Run(t, h))
		k := keysByID(t, body)[id]
		if k == nil || k["label"] != "importer" || k["privilege"] != float64(20) || k["is_active"] != true ||
			k["last_used_at"] != nil || k["revoked_at"] != nil || k["created_at"] == nil {
			t.Fatalf("listed key %v", k)
		}

		// Used: the record of its last use appears.
		testenv.Scenario{URL: digAPI + "/info/app", Headers: testenv.Bearer("Bearer " + plain), ExpectedStatus: 200,
			ExpectedContent: []string{fmt.Sprintf(`"api_key_id":%d`, id), `"privilege":20`}}.Run(t, h)
		body = testenv.CheckEnvelope(t, list.Run(t, h))
		if k = keysByID(t, body)[id]; k["last_used_at"] == nil {
			t.Fatalf("last_used_at not set after use: %v", k)
		}

		// Revoked: refused at once, listed as inactive.
		status, body = env.do(t, env.adminTok, "POST", fmt.Sprintf("/api-key/%d/revoke", id), "")
		if status != 200 || body["code"] != "ok_api_key_revoked" {
			t.Fatalf("revoke: %d %v", status, body)
		}
		testenv.Scenario{URL: digAPI + "/info/app", Headers: testenv.Bearer("Bearer " + plain), ExpectedStatus: 401,
			ExpectedContent: []string{`"code":"unauthenticated"`}}.Run(t, h)
		body = testenv.CheckEnvelope(t, list.Run(t, h))
		if k = keysByID(t, body)[id]; k["is_active"] != false || k["revoked_at"] == nil {
			t.Fatalf("revoked key listed as %v", k)
		}
		if status, _ = env.do(t, env.adminTok, "POST", fmt.Sprintf("/api-key/%d/revoke", id), ""); status != 200 {
			t.Fatalf("second revoke: %d", status)
		}

		// Deleted: gone.
		status, body = env.do(t, env.adminTok, "DELETE", fmt.Sprintf("/api-key/%d", id), "")
		if status != 200 || body["code"] != "ok_api_key_deleted" {
			t.Fatalf("delete: %d %v", status, body)
		}
		body = testenv.CheckEnvelope(t, list.Run(t, h))
		if len(keysByID(t, body)) != 0 {
			t.Fatalf("keys left: %v", body)
		}
		testenv.Scenario{URL: digAPI + "/info/app", Headers: testenv.Bearer("Bearer " + plain), ExpectedStatus: 401,
			ExpectedContent: []string{`"code":"unauthenticated"`}}.Run(t, h)
	})
}

func TestAPIKeyRefusals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newUserAdminEnv(t, e)
		key30 := testenv.NewAPIKey(t, env.app, auth.Reader)
		key10 := testenv.NewAPIKey(t, env.app, auth.Admin)
		adm := testenv.Bearer(env.adminTok)
		for _, s := range []testenv.Scenario{
			{Name: "super_admin key", Method: "POST", URL: "/api-keys", Body: `{"label":"root","privilege":1}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_privilege"`}},
			{Name: "pending key", Method: "POST", URL: "/api-keys", Body: `{"label":"x","privilege":40}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_privilege"`}},
			{Name: "no privilege", Method: "POST", URL: "/api-keys", Body: `{"label":"x"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`}},
			{Name: "no label", Method: "POST", URL: "/api-keys", Body: `{"privilege":30}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`, `"parameter":"label"`}},
			{Name: "blank label", Method: "POST", URL: "/api-keys", Body: `{"label":"  ","privilege":30}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`}},
			{Name: "privilege not a number", Method: "POST", URL: "/api-keys", Body: `{"label":"x","privilege":"someone"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`, "privilege must be a level"}},
			{Name: "label not a string", Method: "POST", URL: "/api-keys", Body: `{"label":[7],"privilege":30}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`, "label must be a string"}},
			{Name: "empty body", Method: "POST", URL: "/api-keys", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`}},
			{Name: "revoke unknown", Method: "POST", URL: "/api-key/99999/revoke", ExpectedStatus: 404, ExpectedContent: []string{`"code":"not_found"`}},
			{Name: "revoke non-numeric", Method: "POST", URL: "/api-key/abc/revoke", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`}},
			{Name: "delete unknown", Method: "DELETE", URL: "/api-key/99999", ExpectedStatus: 404, ExpectedContent: []string{`"code":"not_found"`}},
			{Name: "delete negative id", Method: "DELETE", URL: "/api-key/-1", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`}},
			{Name: "writer lists keys", URL: "/api-keys", Headers: testenv.Bearer(env.writeTok), ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
			{Name: "reader key lists keys", URL: "/api-keys", Headers: testenv.Bearer(key30), ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
			{Name: "reader key mints a key", Method: "POST", URL: "/api-keys", Body: `{"label":"escalate","privilege":10}`, Headers: testenv.Bearer(key30), ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
			{Name: "reader key lists privileges", URL: fmt.Sprintf("/user/%d/privileges", env.writer.ID), Headers: testenv.Bearer(key30), ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
			{Name: "admin key lists users", URL: "/users", Headers: testenv.Bearer(key10), ExpectedStatus: 200, ExpectedContent: []string{`"users":[`}},
			{Name: "admin key lists keys", URL: "/api-keys", Headers: testenv.Bearer(key10), ExpectedStatus: 200, ExpectedContent: []string{`"keys":[`}},
		} {
			s.URL = digAPI + s.URL
			if s.Headers == nil {
				s.Headers = adm
			}
			t.Run(s.Name, func(t *testing.T) { s.Run(t, env.inst.Server) })
		}
		keys, err := auth.ListAPIKeys(t.Context(), env.app.DB)
		if err != nil || len(keys) != 2 {
			t.Fatalf("refused creations stored keys: %+v %v", keys, err)
		}

		// A key at admin level may mint keys; they have no creator.
		status, body := env.do(t, key10, "POST", "/api-keys", `{"label":"minted","privilege":30}`)
		if status != http.StatusOK {
			t.Fatalf("admin key mints: %d %v", status, body)
		}
		minted, err := auth.FindAPIKey(t.Context(), env.app.DB, body["key"].(string))
		if err != nil || minted.CreatedBy != nil {
			t.Fatalf("key minted by a key: %+v %v", minted, err)
		}
	})
}

func TestAPIKeyIsBoundToItsApp(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newUserAdminEnv(t, e)
		testenv.NewApp(t, env.inst.Apps, "other")
		status, body := env.do(t, env.superTok, "POST", "/api-keys", `{"label":"dig only","privilege":10}`)
		if status != http.StatusOK {
			t.Fatalf("create: %d %v", status, body)
		}
		key := "Bearer " + body["key"].(string)
		testenv.Scenario{URL: "/other/api/users", Headers: testenv.Bearer(key), ExpectedStatus: 403,
			ExpectedContent: []string{`"code":"app_mismatch"`}}.Run(t, env.inst.Server)
		testenv.Scenario{URL: digAPI + "/users", Headers: testenv.Bearer(key), ExpectedStatus: 200}.Run(t, env.inst.Server)
	})
}
