package realplugins_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// TestRealPluginSequence: the sequence binary beside the chronology and
// radiocarbon plugins, through the server and its job system on both
// engines. A model of a table with relations, periods and radiocarbon
// dates is created over HTTP, previewed (phases by period, oldest first;
// no order the phases imply), run as a job (an answer with ranges and
// agreement indices, and the job's id), read back by a reader whose row
// subset hides two of the three dated units (their estimates dropped),
// and exported for OxCal as that reader (only the date it sees).
func TestRealPluginSequence(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixtureWith(t, e, func(o *pluginhost.Options) {
			link(t, filepath.Join(binDir, "sequence"), filepath.Join(o.Dir, "sequence"))
		}, true)
		if s := f.mgr.State("sequence"); s != pluginhost.StateRunning {
			t.Fatalf("sequence: %s; log:\n%s", s, f.logs)
		}
		ctx := context.Background()
		f.json("PUT", "/config/table/units", `{"rs":true,"id_field":"code"}`, f.super, 200)
		f.activate("units", "chronology", "chronology")
		f.activate("units", "radiocarbon", "radiocarbon")

		date := func(lab string, bp int) string {
			return fmt.Sprintf(`{"fields":{"lab_code":%q,"bp":%d,"bp_error":30,"curve":"intcal20"}}`, lab, bp)
		}
		u := map[string]int64{}
		for _, c := range []struct{ code, period, dates string }{
			{"US1", `"chrono_label":"Roman","chrono_from":-50,"chrono_to":100`, ``},
			{"US2", `"chrono_label":"Roman","chrono_from":-50,"chrono_to":100`, date("OxA-2", 2000)},
			{"US3", `"chrono_label":"Iron","chrono_from":-400,"chrono_to":-51`, ``},
			{"US4", `"chrono_label":"Iron","chrono_from":-400,"chrono_to":-51`, date("OxA-4", 2200)},
			{"US5", `"chrono_label":"Bronze","chrono_from":-900,"chrono_to":-401`, date("OxA-5", 2600)},
		} {
			body := fmt.Sprintf(`{"core":{"code":%q,%s}`, c.code, c.period)
			if c.dates != "" {
				body += `,"plugins":{"units_radiocarbon":[` + c.dates + `]}`
			}
			m := f.json("POST", "/record/units", body+"}", f.super, 200)
			id, ok := pluginsdk.Int(m["id"])
			if !ok {
				t.Fatalf("create %s: %v", c.code, m)
			}
			u[c.code] = id
		}
		// US1 covers US2 covers US3 covers US4, which cuts US5.
		for _, r := range [][3]int64{{u["US1"], 5, u["US2"]}, {u["US2"], 5, u["US3"]}, {u["US3"], 5, u["US4"]}, {u["US4"], 6, u["US5"]}} {
			f.json("POST", "/record/units/rs", fmt.Sprintf(`{"first":%d,"relation":%d,"second":%d}`, r[0], r[1], r[2]), f.super, 200)
		}
		// The reader sees US1 to US3 only.
		reader, err := auth.FindUserByEmail(ctx, f.app.DB, "reader@example.org")
		if err != nil {
			t.Fatal(err)
		}
		subset := `{"code":{"_in":["US1","US2","US3"]}}`
		if err := auth.SaveTablePrivilege(ctx, f.app.DB, &auth.TablePrivilege{UserID: reader.ID, TableName: "units", Privilege: auth.Reader, Subset: &subset}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}

		// Refused definitions leave nothing behind.
		for _, c := range []struct{ body, code string }{
			{`{"name":"x","phases":{"by":"field","field":"nope"}}`, "field_missing"},
			{`{"name":"x","boundaries":"loose"}`, "invalid_model"},
		} {
			if status, code, m := f.code("POST", "/sequence/units/models", c.body, f.super); status != 400 || code != c.code {
				t.Errorf("%s: %d %v", c.body, status, m)
			}
		}
		if status, code, _ := f.code("POST", "/sequence/units/models", `{"name":"x"}`, f.reader); status != 403 {
			t.Errorf("a reader creates a model: %d %s", status, code)
		}

		m := f.json("POST", "/sequence/units/models", `{"name":"Trench A","phases":{"by":"chronology"},"seed":3,"iterations":2000}`, f.super, 201)
		id := int64(obj(m, "model")["id"].(float64))
		url := fmt.Sprintf("/sequence/units/models/%d", id)
		if list := f.json("GET", "/sequence/units/models", "", f.reader, 200)["models"].([]any); len(list) != 1 {
			t.Fatalf("list: %v", list)
		}

		p := f.json("GET", url+"/preview", "", f.super, 200)
		if got := fmt.Sprint(p["phases"]); got != "[Bronze Iron Roman]" {
			t.Errorf("phases %s", got)
		}
		if n := len(p["dates"].([]any)); n != 3 || len(p["orders"].([]any)) != 0 {
			t.Errorf("preview: %v", p)
		}
		if code := f.json("GET", url+"/result", "", f.super, 404)["code"]; code != "sequence_not_run" {
			t.Errorf("before a run: %v", code)
		}

		rec := f.do("POST", url+"/run", "", f.super)
		if rec.Code != 200 || rec.Header().Get("X-Strata-Job") == "" {
			t.Fatalf("run: %d %v %s", rec.Code, rec.Header(), rec.Body.String())
		}
		var ran struct {
			Run struct {
				ID       int64   `json:"id"`
				AModel   float64 `json:"a_model"`
				AOverall float64 `json:"a_overall"`
				Seed     uint64  `json:"seed"`
			} `json:"run"`
			Result struct {
				Dates []struct {
					Name      string  `json:"name"`
					Agreement float64 `json:"agreement"`
					Posterior struct {
						HPD95 []struct{ From, To int } `json:"hpd95"`
					} `json:"posterior"`
				} `json:"dates"`
				Boundaries []json.RawMessage `json:"boundaries"`
			} `json:"result"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &ran); err != nil {
			t.Fatal(err)
		}
		if ran.Run.ID == 0 || ran.Run.Seed != 3 || ran.Run.AModel <= 0 || ran.Run.AOverall <= 0 ||
			len(ran.Result.Dates) != 3 || len(ran.Result.Boundaries) != 4 {
			t.Fatalf("run answer: %s", rec.Body.String())
		}
		for _, d := range ran.Result.Dates {
			if len(d.Posterior.HPD95) == 0 || d.Agreement <= 0 || d.Posterior.HPD95[0].From > d.Posterior.HPD95[0].To {
				t.Errorf("date %s: %+v", d.Name, d)
			}
		}
		// The job finished with the same answer.
		job := f.json("GET", "/jobs/"+rec.Header().Get("X-Strata-Job"), "", f.super, 200)
		if !strings.Contains(fmt.Sprint(job), "a_model") {
			t.Errorf("job: %v", job)
		}

		// The reader: only US2's date of the stored result.
		res := f.json("GET", url+"/result", "", f.reader, 200)
		var names []string
		for _, d := range obj(res, "result")["dates"].([]any) {
			names = append(names, d.(map[string]any)["name"].(string))
		}
		if strings.Join(names, " ") != "OxA-2" || len(res["dates"].([]any)) != 1 {
			t.Errorf("reader's result: %v %v", names, res["dates"])
		}
		if all := f.json("GET", url+"/result", "", f.super, 200); len(obj(all, "result")["dates"].([]any)) != 3 {
			t.Errorf("super's result: %v", obj(all, "result")["dates"])
		}

		exp := f.do("GET", url+"/export/oxcal", "", f.reader)
		body := exp.Body.String()
		if exp.Code != 200 || exp.Header().Get("Content-Type") != "text/plain; charset=utf-8" ||
			exp.Header().Get("Content-Disposition") != `attachment; filename="Trench A.oxcal"` ||
			!strings.Contains(body, `R_Date("OxA-2",2000,30)`) || strings.Contains(body, "OxA-4") {
			t.Errorf("reader's export: %d %v\n%s", exp.Code, exp.Header(), body)
		}
		if exp := f.do("GET", url+"/export/oxcal", "", f.super); !strings.Contains(exp.Body.String(), `R_Date("OxA-5",2600,30)`) {
			t.Errorf("super's export:\n%s", exp.Body.String())
		}
	})
}
