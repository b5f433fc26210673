package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestSavedQueries: kept per owner, checked when saved, shared and
// unshared, run with the runner's rights (a reader with a row subset
// sees only their rows of a shared query), deleted by their owner.
func TestSavedQueries(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		for _, n := range []string{"Classico A", "Classico B", "Arcaico"} {
			f.create(t, f.writer, "sites", fmt.Sprintf(`{"name":%q}`, n))
		}
		if _, m := f.do(t, f.writer, "GET", api+"/saved-queries", ""); fmt.Sprint(m["queries"]) != "[]" {
			t.Fatalf("empty: %v", m)
		}
		// The suite's form (a quick search) and ours (a filter).
		code, m := f.do(t, f.writer, "POST", api+"/saved-queries", `{"name":"Classico","tb":"sites","query":{"search_type":"fast","search":"Classico"}}`)
		if code != 200 || m["code"] != "ok_saved_query" {
			t.Fatalf("save: %d %v", code, m)
		}
		qid := int64(m["query"].(map[string]any)["id"].(float64))
		code, m = f.do(t, f.writer, "POST", api+"/saved-queries", `{"name":"Arcaico","tb":"sites","definition":{"filter":{"name":{"_eq":"Arcaico"}},"sort_field":"name"}}`)
		if code != 200 {
			t.Fatalf("save with a filter: %d %v", code, m)
		}
		fid := int64(m["query"].(map[string]any)["id"].(float64))
		for _, tc := range []struct {
			name, body string
			status     int
			code       string
		}{
			{"no name", `{"tb":"sites","query":{}}`, 400, "parameter_missing"},
			{"no table", `{"name":"x","query":{}}`, 400, "parameter_missing"},
			{"unknown table", `{"name":"x","tb":"nope","query":{}}`, 404, "table_not_found"},
			{"unknown field in the filter", `{"name":"x","tb":"sites","query":{"filter":{"nope":{"_eq":1}}}}`, 400, "invalid_field"},
		} {
			if code, m := f.do(t, f.writer, "POST", api+"/saved-queries", tc.body); code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		run := func(who string, id int64, q string) (int, map[string]any) {
			return f.do(t, who, "GET", fmt.Sprintf("%s/saved-query/%d/run%s", api, id, q), "")
		}
		if code, m := run(f.writer, qid, ""); code != 200 || m["total"] != float64(2) || len(m["data"].([]any)) != 2 {
			t.Fatalf("run: %d %v", code, m)
		}
		if code, m := run(f.writer, qid, "?per_page=1&page=2"); code != 200 || len(m["data"].([]any)) != 1 || m["total"] != float64(2) {
			t.Fatalf("run paged: %d %v", code, m)
		}
		if code, m := run(f.writer, fid, ""); code != 200 || m["total"] != float64(1) {
			t.Fatalf("run filter: %d %v", code, m)
		}
		// Private: another user sees nothing of it.
		if code, _ := run(f.reader, qid, ""); code != 404 {
			t.Fatalf("another's private query: %d", code)
		}
		if code, m := f.do(t, f.reader, "POST", fmt.Sprintf("%s/saved-query/%d/share", api, qid), ""); code != 404 {
			t.Fatalf("another shares it: %d %v", code, m)
		}
		if code, m := f.do(t, f.writer, "POST", fmt.Sprintf("%s/saved-query/%d/share", api, qid), ""); code != 200 || m["code"] != "ok_sharing_query" {
			t.Fatalf("share: %d %v", code, m)
		}
		// The runner's row subset applies, not the owner's rights.
		reader := f.userID(t, "reader@example.org")
		if code, m := f.do(t, f.super, "POST", fmt.Sprintf("%s/user/%d/privileges", api, reader), `{"table_name":"sites","privilege":30,"subset":{"name":{"_eq":"Classico A"}}}`); code != 200 {
			t.Fatalf("subset: %d %v", code, m)
		}
		if code, m := run(f.reader, qid, ""); code != 200 || m["total"] != float64(1) {
			t.Fatalf("shared run under the reader's subset: %d %v", code, m)
		}
		if _, m := f.do(t, f.reader, "GET", api+"/saved-queries", ""); len(m["queries"].([]any)) != 1 {
			t.Fatalf("reader's list: %v", m)
		}
		if code, _ := f.do(t, f.reader, "DELETE", fmt.Sprintf("%s/saved-query/%d", api, qid), ""); code != 403 {
			t.Fatalf("a reader deletes another's shared query: %d", code)
		}
		if code, m := f.do(t, f.writer, "POST", fmt.Sprintf("%s/saved-query/%d/unshare", api, qid), ""); code != 200 || m["code"] != "ok_unsharing_query" {
			t.Fatalf("unshare: %d %v", code, m)
		}
		for _, id := range []int64{qid, fid} {
			if code, m := f.do(t, f.writer, "DELETE", fmt.Sprintf("%s/saved-query/%d", api, id), ""); code != 200 || m["code"] != "ok_erasing_query" {
				t.Fatalf("delete: %d %v", code, m)
			}
		}
		if code, _ := run(f.writer, qid, ""); code != 404 {
			t.Fatalf("deleted: %d", code)
		}
	})
}
