package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

const batchURL = "/dig/api/batch"

// total is how many rows of tb the super admin sees.
func (f *digFixture) total(t *testing.T, tb string) int {
	t.Helper()
	code, m := f.do(t, f.super, "GET", "/dig/api/records/"+tb+"?ids_only=1", "")
	if code != 200 {
		t.Fatalf("count %s: %d %v", tb, code, m)
	}
	return int(m["total"].(float64))
}

// A batch of mixed tables and kinds answers in request order; updates and
// deletes store versions; the compact form works the same.
func TestBatchApplies(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		old := f.create(t, f.writer, "finds", `{"label":"old","weight":1}`)
		gone := f.create(t, f.writer, "finds", `{"label":"gone"}`)
		code, m := f.do(t, f.writer, "POST", batchURL, fmt.Sprintf(`{"requests":[
			{"method":"POST","url":"/record/sites","body":{"core":{"name":"Pompeii"}}},
			{"method":"POST","url":"/record/finds","body":{"label":"a1","weight":"2.5","plugins":{"finds_samples":[{"fields":{"lab":"L","bp":"120"}}]}}},
			{"method":"POST","url":"/dig/api/record/finds/%d","body":{"weight":3}},
			{"method":"delete","url":"/record/finds/%d"},
			{"method":"POST","url":"/record/finds","body":{"id":"%d","core":{"label":"new"}}}]}`, old, gone, old))
		if code != 200 || m["code"] != "batch_saved" {
			t.Fatalf("batch: %d %v", code, m)
		}
		res := m["results"].([]any)
		wantCodes := []string{"success_created", "success_created", "success_saved", "success_deleted", "success_saved"}
		for i, r := range res {
			r := r.(map[string]any)
			if r["status"] != "success" || r["code"] != wantCodes[i] || r["id"] == nil {
				t.Errorf("result %d: %v", i, r)
			}
		}
		if len(res) != 5 || res[2].(map[string]any)["id"] != float64(old) || res[3].(map[string]any)["id"] != float64(gone) {
			t.Fatalf("results: %v", res)
		}
		if f.total(t, "sites") != 1 || f.total(t, "finds") != 2 || f.total(t, "finds_samples") != 1 {
			t.Fatalf("rows: sites %d finds %d samples %d", f.total(t, "sites"), f.total(t, "finds"), f.total(t, "finds_samples"))
		}
		_, rec := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d", old), "")
		core := rec["core"].(map[string]any)
		if core["label"].(map[string]any)["val"] != "new" || core["weight"].(map[string]any)["val"] != 3.0 {
			t.Errorf("updated record: %v", core)
		}
		// Two updates of old → two versions; the delete → one.
		_, v := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d/versions", old), "")
		if n := len(v["versions"].([]any)); n != 2 {
			t.Errorf("versions of the updated record: %d", n)
		}
		_, d := f.do(t, f.reader, "GET", "/dig/api/record/finds/deleted", "")
		if del := d["deleted"].([]any); len(del) != 1 || del[0].(map[string]any)["record_id"] != float64(gone) {
			t.Errorf("delete version: %v", d)
		}

		// The history lists what the batch created and changed.
		_, h := f.do(t, f.writer, "GET", "/dig/api/history", "")
		actions := map[string]string{}
		for _, e := range h["history"].([]any) {
			e := e.(map[string]any)
			actions[fmt.Sprint(e["tb"], "/", e["id"])] = fmt.Sprint(e["action"])
		}
		if a := actions[fmt.Sprint("finds/", res[1].(map[string]any)["id"])]; a != "create" {
			t.Errorf("history of the created find: %q in %v", a, actions)
		}
		if a := actions[fmt.Sprint("finds/", old)]; a != "update" {
			t.Errorf("history of the updated find: %q in %v", a, actions)
		}

		// The compact form: creations, updates, deletions.
		code, m = f.do(t, f.writer, "POST", batchURL, fmt.Sprintf(`{"create":{"finds":[{"label":"c1"},{"core":{"label":"c2"}}],"sites":[{"name":"Paestum"}]},
			"update":{"finds":[{"id":%d,"weight":4}]},"delete":{"finds":[%d]}}`, old, old))
		if code != 200 || len(m["results"].([]any)) != 5 {
			t.Fatalf("compact batch: %d %v", code, m)
		}
		if f.total(t, "finds") != 3 || f.total(t, "sites") != 2 {
			t.Errorf("compact batch rows: finds %d sites %d", f.total(t, "finds"), f.total(t, "sites"))
		}
	})
}

// One bad row refuses the whole batch: every failing request is named by
// its index and field, and nothing is written, versions included.
func TestBatchAllOrNothing(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		site := f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		old := f.create(t, f.writer, "finds", `{"label":"old"}`)
		for _, s := range []testenv.Scenario{
			{Name: "validation in several rows", Body: fmt.Sprintf(`{"requests":[
				{"method":"POST","url":"/record/finds","body":{"label":"ok"}},
				{"method":"POST","url":"/record/finds","body":{"label":"ok2","weight":101}},
				{"method":"POST","url":"/record/finds/%d","body":{"label":"x"}},
				{"method":"POST","url":"/record/finds","body":{"weight":1,"unit":99999}},
				{"method":"DELETE","url":"/record/finds/%d"}]}`, old, old), ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"validation_failed"`, `"index":1,"field":"weight"`, `"rule":"max"`,
					`"index":3,"field":"label"`, `"rule":"required"`, `"index":3,"field":"unit"`, `"rule":"lookup"`, `"indexes":[1,3]`},
				NotExpectedContent: []string{`"index":0`, `"index":2`}},
			{Name: "unique within the batch", Body: `{"requests":[
				{"method":"POST","url":"/record/sites","body":{"name":"Paestum"}},
				{"method":"POST","url":"/record/sites","body":{"name":"Paestum"}},
				{"method":"POST","url":"/record/sites","body":{"name":"Pompeii"}}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"index":1,"field":"name"`, `"index":2,"field":"name"`, `"rule":"no_dupl"`, `"indexes":[1,2]`}},
			{Name: "plugin row fails", Body: `{"requests":[{"method":"POST","url":"/record/finds","body":{"label":"a","plugins":{"finds_samples":[{"fields":{"bp":"old"}}]}}}]}`,
				ExpectedStatus: 400, ExpectedContent: []string{`"index":0,"field":"bp"`, `"table":"finds_samples"`, `"row":0`}},
			{Name: "missing record stops the batch", Body: `{"requests":[{"method":"POST","url":"/record/finds","body":{"label":"a"}},{"method":"DELETE","url":"/record/finds/9999"}]}`,
				ExpectedStatus: 404, ExpectedContent: []string{`"code":"record_not_found"`, `"index":1`}},
			{Name: "a record in use", Body: fmt.Sprintf(`{"requests":[{"method":"POST","url":"/record/units","body":{"code":"US 1","site":%d}},{"method":"DELETE","url":"/record/sites/%d"}]}`, site, site),
				ExpectedStatus: 0, ExpectedContent: []string{`"index":1`}},
		} {
			s.Method, s.URL, s.Headers = "POST", batchURL, testenv.Bearer(f.writer)
			t.Run(s.Name, func(t *testing.T) {
				if s.ExpectedStatus == 0 {
					// Lookups need not be foreign keys: either the delete is
					// refused (409) or the batch goes through; both are whole.
					code, m := f.do(t, f.writer, s.Method, s.URL, s.Body)
					if code != 200 && (code != 409 || m["index"] != 1.0) {
						t.Errorf("%d %v", code, m)
					}
					if code == 409 && (f.total(t, "units") != 0 || f.total(t, "sites") != 1) {
						t.Errorf("a refused batch wrote")
					}
					return
				}
				s.Run(t, f.inst.Server)
			})
		}
		if n := f.total(t, "finds"); n != 1 {
			t.Fatalf("refused batches left finds: %d", n)
		}
		if f.total(t, "finds_samples") != 0 {
			t.Fatal("refused batches left plugin rows")
		}
		_, rec := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d", old), "")
		if rec["core"].(map[string]any)["label"].(map[string]any)["val"] != "old" {
			t.Errorf("a refused update was kept: %v", rec["core"])
		}
		_, v := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d/versions", old), "")
		if n := len(v["versions"].([]any)); n != 0 {
			t.Errorf("refused batches left versions: %d", n)
		}
	})
}

// Each request is checked with the caller's level on its own table and
// the row rules; one refusal refuses the batch.
func TestBatchPrivileges(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		writers := f.create(t, f.writer, "finds", `{"label":"w"}`)
		mine := f.create(t, f.self, "finds", `{"label":"s"}`)
		site := f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		// The reader is raised to writer on units, the writer lowered to reader on sites.
		for who, body := range map[string]string{
			"reader@example.org": `{"table_name":"units","privilege":20}`,
			"writer@example.org": `{"table_name":"sites","privilege":30}`,
		} {
			if code, m := f.do(t, f.super, "POST", fmt.Sprintf("/dig/api/user/%d/privileges", f.userID(t, who)), body); code != 200 {
				t.Fatalf("override: %d %v", code, m)
			}
		}
		create := func(tb, body string) string {
			return fmt.Sprintf(`{"method":"POST","url":"/record/%s","body":%s}`, tb, body)
		}
		batch := func(reqs ...string) string { return `{"requests":[` + strings.Join(reqs, ",") + `]}` }
		for _, s := range []testenv.Scenario{
			{Name: "reader may not create", Headers: testenv.Bearer(f.reader), Body: batch(create("finds", `{"label":"r"}`)),
				ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`, `"index":0`, `"required":"add_new"`}},
			{Name: "reader key may not delete", Headers: testenv.Bearer(f.readerKey), Body: batch(fmt.Sprintf(`{"method":"DELETE","url":"/record/finds/%d"}`, writers)),
				ExpectedStatus: 403, ExpectedContent: []string{`"index":0`, `"required":"edit"`}},
			{Name: "self_writer may not update another's record", Headers: testenv.Bearer(f.self),
				Body:           batch(create("finds", `{"label":"s2"}`), fmt.Sprintf(`{"method":"POST","url":"/record/finds/%d","body":{"label":"x"}}`, mine), fmt.Sprintf(`{"method":"POST","url":"/record/finds/%d","body":{"label":"x"}}`, writers)),
				ExpectedStatus: 403, ExpectedContent: []string{`"reason":"not_your_record"`, `"index":2`}},
			{Name: "self_writer may not delete another's record", Headers: testenv.Bearer(f.self2), Body: batch(fmt.Sprintf(`{"method":"DELETE","url":"/record/finds/%d"}`, mine)),
				ExpectedStatus: 403, ExpectedContent: []string{`"reason":"not_your_record"`, `"index":0`}},
			{Name: "override lowers the writer on sites", Headers: testenv.Bearer(f.writer), Body: batch(create("finds", `{"label":"ok"}`), create("sites", `{"name":"Paestum"}`)),
				ExpectedStatus: 403, ExpectedContent: []string{`"index":1`, `"required":"add_new"`}},
			{Name: "override raises the reader on units", Headers: testenv.Bearer(f.reader), Body: batch(create("units", fmt.Sprintf(`{"code":"US 1","site":%d}`, site))),
				ExpectedStatus: 200, ExpectedContent: []string{`"code":"batch_saved"`, `"code":"success_created"`}},
			{Name: "self_writer changes its own", Headers: testenv.Bearer(f.self), Body: batch(fmt.Sprintf(`{"method":"POST","url":"/record/finds/%d","body":{"label":"s3"}}`, mine)),
				ExpectedStatus: 200, ExpectedContent: []string{`"code":"success_saved"`}},
			{Name: "no credential", Body: batch(create("finds", `{"label":"x"}`)), ExpectedStatus: 401},
		} {
			s.Method, s.URL = "POST", batchURL
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		if n := f.total(t, "finds"); n != 2 {
			t.Errorf("finds after refused batches: %d", n)
		}
		if n := f.total(t, "sites"); n != 1 {
			t.Errorf("sites after refused batches: %d", n)
		}
		_, rec := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d", writers), "")
		if rec["core"].(map[string]any)["label"].(map[string]any)["val"] != "w" {
			t.Errorf("the self_writer changed another's record")
		}
	})
}

// Row subsets hide rows from batch updates and deletes as from single ones.
func TestBatchRowSubset(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		pompeii := f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		herc := f.create(t, f.super, "sites", `{"name":"Herculaneum"}`)
		body := `{"table_name":"sites","privilege":20,"subset":{"name":{"_starts_with":"P"}}}`
		if code, m := f.do(t, f.super, "POST", fmt.Sprintf("/dig/api/user/%d/privileges", f.userID(t, "reader@example.org")), body); code != 200 {
			t.Fatalf("override: %d %v", code, m)
		}
		code, m := f.do(t, f.reader, "POST", batchURL, fmt.Sprintf(`{"requests":[{"method":"POST","url":"/record/sites/%d","body":{"name":"Pompei"}},
			{"method":"POST","url":"/record/sites/%d","body":{"name":"Ercolano"}}]}`, pompeii, herc))
		if code != 404 || m["code"] != "record_not_found" || m["index"] != 1.0 {
			t.Fatalf("update of a hidden row: %d %v", code, m)
		}
		code, m = f.do(t, f.reader, "POST", batchURL, fmt.Sprintf(`{"requests":[{"method":"DELETE","url":"/record/sites/%d"}]}`, herc))
		if code != 404 || m["index"] != 0.0 {
			t.Fatalf("delete of a hidden row: %d %v", code, m)
		}
		code, m = f.do(t, f.reader, "POST", batchURL, fmt.Sprintf(`{"requests":[{"method":"POST","url":"/record/sites/%d","body":{"name":"Pompei"}}]}`, pompeii))
		if code != 200 {
			t.Fatalf("update of a visible row: %d %v", code, m)
		}

		// Creates written together (records.CreateMany) check lookups
		// against the subset too: a unit of a hidden site among 300 is
		// refused with its index, and nothing is written.
		body = `{"table_name":"units","privilege":20}`
		if code, m := f.do(t, f.super, "POST", fmt.Sprintf("/dig/api/user/%d/privileges", f.userID(t, "reader@example.org")), body); code != 200 {
			t.Fatalf("override: %d %v", code, m)
		}
		units := func(hidden int) string {
			reqs := make([]string, 300)
			for i := range reqs {
				site := pompeii
				if i == hidden {
					site = herc
				}
				reqs[i] = fmt.Sprintf(`{"method":"POST","url":"/record/units","body":{"code":"US %d","site":%d}}`, i, site)
			}
			return `{"requests":[` + strings.Join(reqs, ",") + `]}`
		}
		code, m = f.do(t, f.reader, "POST", batchURL, units(237))
		if code != 400 || m["code"] != "validation_failed" || fmt.Sprint(m["indexes"]) != "[237]" {
			t.Fatalf("create referring to a hidden row: %d %v", code, m)
		}
		if n := f.total(t, "units"); n != 0 {
			t.Errorf("a refused batch wrote %d units", n)
		}
		if code, m = f.do(t, f.reader, "POST", batchURL, units(-1)); code != 200 {
			t.Fatalf("creates referring to a visible row: %d %v", code, m)
		}
		if n := f.total(t, "units"); n != 300 {
			t.Errorf("%d units, want 300", n)
		}
	})
}

// Malformed batches and entries are refused before anything happens,
// naming the entry; more requests than the cap → 413.
func TestBatchMalformed(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		tooMany := make([]string, 1001)
		for i := range tooMany {
			tooMany[i] = `{"method":"DELETE","url":"/record/finds/1"}`
		}
		for _, s := range []testenv.Scenario{
			{Name: "not JSON", Body: `{"requests":[`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`}},
			{Name: "requests not a list", Body: `{"requests":{"a":1}}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`, `"field":"requests"`}},
			{Name: "empty", Body: `{"requests":[]}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"batch_empty"`}},
			{Name: "no requests at all", Body: `{}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"batch_empty"`}},
			{Name: "entry not an object", Body: `{"requests":[{"method":"POST","url":"/record/finds","body":{"label":"a"}},"x"]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_json"`, `"index":1`, `"field":"requests[1]"`}},
			{Name: "body not an object", Body: `{"requests":[{"method":"POST","url":"/record/finds","body":[1]}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_json"`, `"index":0`, `"field":"requests[0].body"`}},
			{Name: "core not an object", Body: `{"requests":[{"method":"POST","url":"/record/finds","body":{"core":"x"}}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_json"`, `"index":0`, `"field":"body.core"`}},
			{Name: "unsupported method", Body: `{"requests":[{"method":"POST","url":"/record/finds","body":{"label":"a"}},{"method":"GET","url":"/record/finds/1"}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_batch_request"`, `"index":1`}},
			{Name: "unsupported url", Body: `{"requests":[{"method":"POST","url":"/records/finds","body":{}}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_batch_request"`, `"index":0`}},
			{Name: "url with a query", Body: `{"requests":[{"method":"DELETE","url":"/record/finds/1?x=1"}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_batch_request"`, `"index":0`}},
			{Name: "another route", Body: `{"requests":[{"method":"POST","url":"/config/table/finds/labels"}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_batch_request"`}},
			{Name: "delete without id", Body: `{"requests":[{"method":"DELETE","url":"/record/finds"}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_batch_request"`, `"index":0`}},
			{Name: "bad id", Body: `{"requests":[{"method":"DELETE","url":"/record/finds/x"}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_id"`, `"index":0`}},
			{Name: "url and body ids differ", Body: `{"requests":[{"method":"POST","url":"/record/finds/1","body":{"id":2,"label":"a"}}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_id"`, `"index":0`}},
			{Name: "unknown table", Body: `{"requests":[{"method":"POST","url":"/record/finds","body":{"label":"a"}},{"method":"POST","url":"/record/nowhere","body":{}}]}`, ExpectedStatus: 404,
				ExpectedContent: []string{`"code":"table_not_found"`, `"index":1`}},
			{Name: "plugin table", Body: `{"requests":[{"method":"POST","url":"/record/finds_samples","body":{"lab":"x"}}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_parameter"`, `"index":0`}},
			{Name: "unknown field", Body: `{"requests":[{"method":"POST","url":"/record/finds","body":{"label":"a"}},{"method":"POST","url":"/record/finds","body":{"colour":"red"}}]}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_field"`, `"field":"colour"`, `"index":1`}},
			{Name: "both forms", Body: `{"requests":[{"method":"DELETE","url":"/record/finds/1"}],"delete":{"finds":[1]}}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_batch_request"`}},
			{Name: "compact creation with an id", Body: `{"create":{"finds":[{"label":"a"},{"id":3,"label":"b"}]}}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_batch_request"`, `"index":1`}},
			{Name: "compact bad delete id", Body: `{"delete":{"finds":["x"]}}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`, `"index":0`}},
			{Name: "too many requests", Body: `{"requests":[` + strings.Join(tooMany, ",") + `]}`, ExpectedStatus: 413,
				ExpectedContent: []string{`"code":"batch_too_large"`, `"max_requests":1000`, `"requests":1001`}},
		} {
			s.Method, s.URL, s.Headers = "POST", batchURL, testenv.Bearer(f.writer)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		if n := f.total(t, "finds"); n != 0 {
			t.Errorf("malformed batches wrote %d finds", n)
		}
	})
}

// The cap on requests is the instance's setting.
func TestBatchCapIsConfigurable(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e, func(c *config.Config) { c.MaxBatchRequests = 2 })
		testenv.NewApp(t, inst.Apps, "dig")
		token := testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
		del := `{"method":"DELETE","url":"/record/finds/1"}`
		testenv.Scenario{Method: "POST", URL: batchURL, Headers: testenv.Bearer(token), Body: `{"requests":[` + del + "," + del + "," + del + `]}`,
			ExpectedStatus: 413, ExpectedContent: []string{`"code":"batch_too_large"`, `"max_requests":2`, `"requests":3`}}.Run(t, inst.Server)
		testenv.Scenario{Method: "POST", URL: batchURL, Headers: testenv.Bearer(token), Body: `{"delete":{"a":[1,2],"b":[3]}}`,
			ExpectedStatus: 413, ExpectedContent: []string{`"code":"batch_too_large"`}}.Run(t, inst.Server)
	})
}
