package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestTablePrivilegeLifecycle(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newUserAdminEnv(t, e)
		h := env.inst.Server
		path := fmt.Sprintf("/user/%d/privileges", env.writer.ID)

		testenv.Scenario{URL: digAPI + path, Headers: testenv.Bearer(env.adminTok), ExpectedStatus: 200,
			ExpectedContent: []string{`"data":[]`}}.Run(t, h)

		status, body := env.do(t, env.adminTok, "POST", path, `{"table_name":"finds","privilege":30,"subset":null}`)
		if status != http.StatusOK || body["code"] != "privilege_saved" {
			t.Fatalf("save: %d %v", status, body)
		}
		id := body["id"]
		// Saving again for the same table updates the one row.
		status, body = env.do(t, env.adminTok, "POST", path, `{"table_name":"finds","privilege":"40"}`)
		if status != http.StatusOK || body["id"] != id {
			t.Fatalf("upsert: %d %v (first id %v)", status, body, id)
		}
		env.do(t, env.adminTok, "POST", path, `{"table_name":"sites","privilege":10}`)
		testenv.Scenario{URL: digAPI + path, Headers: testenv.Bearer(env.adminTok), ExpectedStatus: 200,
			ExpectedContent: []string{
				fmt.Sprintf(`{"id":%v,"user_id":%d,"table_name":"finds","privilege":40,`, id, env.writer.ID),
				`"table_name":"sites","privilege":10,`, `"subset":null`,
			}}.Run(t, h)
		_, body = env.do(t, env.adminTok, "GET", "/users", "")
		if n := usersByEmail(t, body)["wes@example.org"]["override_count"]; n != float64(2) {
			t.Fatalf("override_count %v, want 2", n)
		}

		// Overrides are read on every request: the user's session survives.
		testenv.Scenario{URL: digAPI + "/info/app", Headers: testenv.Bearer(env.writeTok), ExpectedStatus: 200}.Run(t, h)

		status, body = env.do(t, env.adminTok, "DELETE", fmt.Sprintf("/privilege/%v", id), "")
		if status != http.StatusOK || body["code"] != "privilege_deleted" {
			t.Fatalf("delete: %d %v", status, body)
		}
		privs, err := auth.ListTablePrivileges(t.Context(), env.app.DB, env.writer.ID)
		if err != nil || len(privs) != 1 || privs[0].TableName != "sites" {
			t.Fatalf("after delete: %+v %v", privs, err)
		}
		testenv.Scenario{URL: digAPI + "/info/app", Headers: testenv.Bearer(env.writeTok), ExpectedStatus: 200}.Run(t, h)
	})
}

func TestTablePrivilegeRefusals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newUserAdminEnv(t, e)
		superOverride, err := auth.GrantTablePrivilege(t.Context(), env.app.DB, &auth.Actor{UserID: env.super.ID, Privilege: auth.SuperAdmin},
			env.super.ID, "finds", auth.Reader, nil, env.super.CreatedAt, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := fmt.Sprintf("/user/%d/privileges", env.writer.ID)
		for _, s := range []testenv.Scenario{
			{Name: "subset on a table the catalog does not have", Method: "POST", URL: w, Body: `{"table_name":"finds","privilege":20,"subset":{"site":{"_eq":"A"}}}`,
				ExpectedStatus: 404, ExpectedContent: []string{`"code":"table_not_found"`}},
			{Name: "super_admin override", Method: "POST", URL: w, Body: `{"table_name":"finds","privilege":1}`,
				ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_privilege"`}},
			{Name: "unknown level", Method: "POST", URL: w, Body: `{"table_name":"finds","privilege":15}`,
				ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_privilege"`}},
			{Name: "no privilege", Method: "POST", URL: w, Body: `{"table_name":"finds"}`,
				ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_privilege"`}},
			{Name: "system table", Method: "POST", URL: w, Body: `{"table_name":"sys_users","privilege":30}`,
				ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_table"`}},
			{Name: "not an identifier", Method: "POST", URL: w, Body: `{"table_name":"finds; drop table x","privilege":30}`,
				ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_table"`}},
			{Name: "no table", Method: "POST", URL: w, Body: `{"privilege":30}`,
				ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_table"`}},
			{Name: "table not a string", Method: "POST", URL: w, Body: `{"table_name":["finds"],"privilege":30}`,
				ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`, "table_name must be a string"}},
			{Name: "save for unknown user", Method: "POST", URL: "/user/99999/privileges", Body: `{"table_name":"finds","privilege":30}`,
				ExpectedStatus: 404, ExpectedContent: []string{`"code":"user_not_found"`}},
			{Name: "list for unknown user", URL: "/user/99999/privileges", ExpectedStatus: 404, ExpectedContent: []string{`"code":"user_not_found"`}},
			{Name: "list non-numeric user", URL: "/user/wes/privileges", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`}},
			{Name: "override on the super_admin", Method: "POST", URL: fmt.Sprintf("/user/%d/privileges", env.super.ID), Body: `{"table_name":"finds","privilege":40}`,
				ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
			{Name: "delete the super_admin's override", Method: "DELETE", URL: fmt.Sprintf("/privilege/%d", superOverride.ID),
				ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
			{Name: "delete unknown", Method: "DELETE", URL: "/privilege/99999", ExpectedStatus: 404, ExpectedContent: []string{`"code":"not_found"`}},
			{Name: "delete non-numeric", Method: "DELETE", URL: "/privilege/x", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`}},
		} {
			s.URL = digAPI + s.URL
			s.Headers = testenv.Bearer(env.adminTok)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, env.inst.Server) })
		}
		if privs, _ := auth.ListTablePrivileges(t.Context(), env.app.DB, env.writer.ID); len(privs) != 0 {
			t.Errorf("refused requests wrote overrides: %+v", privs)
		}
		if privs, _ := auth.ListTablePrivileges(t.Context(), env.app.DB, env.super.ID); len(privs) != 1 || privs[0].Privilege != auth.Reader {
			t.Errorf("the super_admin's override changed: %+v", privs)
		}
	})
}
