package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestVersionsRestoreAndHistory(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		code, m := f.do(t, f.writer, "POST", "/dig/api/record/finds",
			`{"core":{"label":"v1","weight":1,"inv":"INV-1"},"plugins":{"finds_samples":[{"fields":{"lab":"OxA","bp":3200}}]}}`)
		if code != 200 {
			t.Fatal(m)
		}
		id := int64(m["id"].(float64))
		rec := fmt.Sprintf("/dig/api/record/finds/%d", id)
		save := func(core string) {
			t.Helper()
			if code, m := f.do(t, f.writer, "POST", "/dig/api/record/finds", fmt.Sprintf(`{"id":%d,"core":%s}`, id, core)); code != 200 {
				t.Fatalf("save %s: %d %v", core, code, m)
			}
		}
		save(`{"label":"v2","weight":2}`)
		save(`{"label":"v3","inv":"INV-3"}`)

		_, m = f.do(t, f.reader, "GET", rec+"/versions", "")
		vs := m["versions"].([]any)
		if len(vs) != 2 || vs[0].(map[string]any)["operation"] != "update" {
			t.Fatalf("versions: %v", vs)
		}
		// Each version names its author, for a reader too (who may not
		// list the accounts): the account's name (here its email).
		for _, v := range vs {
			if u := v.(map[string]any)["user"]; u != "writer@example.org" {
				t.Fatalf("version's user %v, want the writer's name: %v", u, v)
			}
		}
		newest, oldest := vs[0].(map[string]any)["id"].(float64), vs[1].(map[string]any)["id"].(float64)
		if newest < oldest {
			t.Fatal("versions must be newest first")
		}
		// The oldest snapshot is the record as created; current is v3.
		code, m = f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/version/%d", int64(oldest)), "")
		content := m["version"].(map[string]any)["content"].(map[string]any)
		if code != 200 || content["core"].(map[string]any)["label"] != "v1" || m["current"].(map[string]any)["core"].(map[string]any)["label"] != "v3" {
			t.Fatalf("version: %d %v", code, m)
		}
		if len(content["plugins"].(map[string]any)["finds_samples"].([]any)) != 1 {
			t.Fatalf("snapshot lacks plugin rows: %v", content["plugins"])
		}
		// The diff names exactly the fields that differ: label, weight, inv.
		var changed []string
		for _, ch := range m["changes"].([]any) {
			changed = append(changed, ch.(map[string]any)["field"].(string))
		}
		if fmt.Sprint(changed) != "[inv label weight]" {
			t.Fatalf("changes: %v", m["changes"])
		}

		restore := fmt.Sprintf("/dig/api/version/%d/restore", int64(oldest))
		for _, s := range []testenv.Scenario{
			{Name: "restore needs admin", Method: "POST", URL: restore, Headers: testenv.Bearer(f.writer), Body: `{}`, ExpectedStatus: 403},
			{Name: "unknown field", Method: "POST", URL: restore, Headers: testenv.Bearer(f.super), Body: `{"fields":["nope"]}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "unknown plugin table", Method: "POST", URL: restore, Headers: testenv.Bearer(f.super), Body: `{"restore_plugins":["units"]}`, ExpectedStatus: 400},
			{Name: "unknown version", URL: "/dig/api/version/999999", Headers: testenv.Bearer(f.super), ExpectedStatus: 404, ExpectedContent: []string{`"code":"version_not_found"`}},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		// Restore one field only.
		if code, m = f.do(t, f.super, "POST", restore, `{"fields":["weight"]}`); code != 200 || m["created"] != false {
			t.Fatalf("restore field: %d %v", code, m)
		}
		// The admin's restore names the admin's account name ("Admin").
		_, m = f.do(t, f.reader, "GET", rec+"/versions", "")
		if u := m["versions"].([]any)[0].(map[string]any)["user"]; u != "Admin" {
			t.Fatalf("the restore's version names %v, want Admin: %v", u, m["versions"])
		}
		_, r := f.do(t, f.reader, "GET", rec, "")
		core := r["core"].(map[string]any)
		if core["weight"].(map[string]any)["val"] != 1.0 || core["label"].(map[string]any)["val"] != "v3" {
			t.Fatalf("after field restore: weight %v label %v", core["weight"], core["label"])
		}

		// Delete, list as deleted, restore whole with its id and plugin rows.
		if code, m = f.do(t, f.writer, "DELETE", rec, ""); code != 200 {
			t.Fatalf("delete: %d %v", code, m)
		}
		_, m = f.do(t, f.reader, "GET", "/dig/api/record/finds/deleted", "")
		del := m["deleted"].([]any)
		if len(del) != 1 || del[0].(map[string]any)["record_id"] != float64(id) {
			t.Fatalf("deleted list: %v", del)
		}
		delVersion := int64(del[0].(map[string]any)["id"].(float64))
		// A deleted record's current state keeps its shape, empty.
		if _, m = f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/version/%d", delVersion), ""); fmt.Sprint(m["current"]) != "map[core:<nil> plugins:<nil>]" {
			t.Errorf("current of a deleted record: %v", m["current"])
		}
		code, m = f.do(t, f.super, "POST", fmt.Sprintf("/dig/api/version/%d/restore", delVersion), `{"restore_plugins":["finds_samples"]}`)
		if code != 200 || m["created"] != true || m["id"] != float64(id) {
			t.Fatalf("restore deleted: %d %v", code, m)
		}
		_, r = f.do(t, f.writer, "GET", rec, "")
		if r["core"].(map[string]any)["label"].(map[string]any)["val"] != "v3" || r["can_edit"] != true {
			t.Fatalf("re-created record: %v can_edit %v", r["core"], r["can_edit"])
		}
		if r["plugins"].(map[string]any)["finds_samples"].(map[string]any)["metadata"].(map[string]any)["tot"] != 1.0 {
			t.Fatal("plugin rows not restored")
		}
		if _, m = f.do(t, f.reader, "GET", "/dig/api/record/finds/deleted", ""); len(m["deleted"].([]any)) != 0 {
			t.Fatal("a restored record is still listed as deleted")
		}
		// New records still get fresh ids after an id was re-used.
		next := f.create(t, f.writer, "finds", `{"label":"next"}`)
		if next <= id {
			t.Fatalf("new id %d not after %d", next, id)
		}

		// History: the writer's recent records, newest first; the reader has none.
		_, m = f.do(t, f.writer, "GET", "/dig/api/history", "")
		h := m["history"].([]any)
		if len(h) < 2 || h[0].(map[string]any)["id"] != float64(next) || h[0].(map[string]any)["action"] != "create" {
			t.Fatalf("history: %v", h)
		}
		if _, m = f.do(t, f.reader, "GET", "/dig/api/history", ""); len(m["history"].([]any)) != 0 {
			t.Fatalf("reader history: %v", m)
		}
	})
}

// TestEditHistory: GET /history's {total, data} rows (BraDypUS's
// history screen) with paging and filters, within the caller's tables
// and row subsets.
func TestEditHistory(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		pompeii := f.create(t, f.writer, "sites", `{"name":"Pompeii"}`)
		herc := f.create(t, f.writer, "sites", `{"name":"Herculaneum"}`)
		find := f.create(t, f.writer, "finds", `{"label":"a"}`)
		for i, u := range []struct {
			who, tb string
			id      int64
			core    string
		}{
			{f.writer, "sites", pompeii, `{"name":"Pompeii 2"}`},
			{f.super, "sites", herc, `{"name":"Herculaneum 2"}`},
			{f.writer, "finds", find, `{"label":"b"}`},
			{f.writer, "finds", find, `{"label":"c"}`},
		} {
			if code, m := f.do(t, u.who, "POST", "/dig/api/record/"+u.tb, fmt.Sprintf(`{"id":%d,"core":%s}`, u.id, u.core)); code != 200 {
				t.Fatalf("save %d: %d %v", i, code, m)
			}
		}
		writer := f.userID(t, "writer@example.org")
		today := time.Now().UTC().Format(time.DateOnly)
		for _, s := range []struct {
			name, who, query string
			total            int
			rows             int
		}{
			{"all", f.reader, "", 4, 4},
			{"paged", f.reader, "?page=2&per_page=3", 4, 1},
			{"page as text", f.reader, "?page=%201%20&per_page=1", 4, 1},
			{"by table", f.reader, "?tb=sites", 2, 2},
			{"by table, other name", f.reader, "?table=finds", 2, 2},
			{"by record", f.reader, fmt.Sprintf("?tb=sites&rowid=%d", herc), 1, 1},
			{"by user id", f.reader, fmt.Sprintf("?user=%d", writer), 3, 3},
			{"by part of the email, any case", f.reader, "?user=WRITER@", 3, 3},
			{"by date range", f.reader, "?from=" + today + "&to=" + today, 4, 4},
			{"before the range", f.reader, "?to=2000-01-01", 0, 0},
			{"api key", f.readerKey, "?tb=finds", 2, 2},
		} {
			t.Run(s.name, func(t *testing.T) {
				code, m := f.do(t, s.who, "GET", "/dig/api/history"+s.query, "")
				if code != 200 || m["total"] != float64(s.total) || len(m["data"].([]any)) != s.rows {
					t.Fatalf("%d total %v data %v", code, m["total"], m["data"])
				}
			})
		}
		_, m := f.do(t, f.reader, "GET", "/dig/api/history?per_page=1", "")
		row := m["data"].([]any)[0].(map[string]any)
		content, _ := row["content"].(string)
		if row["tb"] != "finds" || row["rowid"] != float64(find) || row["user"] != "writer@example.org" ||
			row["operation"] != "update" || !strings.Contains(content, `"label":"b"`) || row["time"] == nil {
			t.Fatalf("row: %v", row)
		}
		if _, ok := m["history"].([]any); !ok {
			t.Fatalf("history key gone: %v", m)
		}

		// A table the reader may not read, and a row subset on another.
		reader := f.userID(t, "reader@example.org")
		priv := fmt.Sprintf("/dig/api/user/%d/privileges", reader)
		for _, body := range []string{`{"table_name":"finds","privilege":40}`, `{"table_name":"sites","privilege":30,"subset":{"name":{"_starts_with":"Pomp"}}}`} {
			if code, m := f.do(t, f.super, "POST", priv, body); code != 200 {
				t.Fatalf("privilege %s: %d %v", body, code, m)
			}
		}
		_, m = f.do(t, f.reader, "GET", "/dig/api/history", "")
		if m["total"] != 1.0 || m["data"].([]any)[0].(map[string]any)["rowid"] != float64(pompeii) {
			t.Fatalf("under overrides: %v", m)
		}
		for _, s := range []testenv.Scenario{
			{Name: "bad page", URL: "/dig/api/history?page=x", Headers: testenv.Bearer(f.reader), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_parameter"`}},
			{Name: "bad date", URL: "/dig/api/history?from=yesterday", Headers: testenv.Bearer(f.reader), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_parameter"`}},
			{Name: "signed in only", URL: "/dig/api/history", ExpectedStatus: 401},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
	})
}
