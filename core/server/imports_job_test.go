package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// Imports of a signed-in user run as jobs: the answer waits for the job
// (same body as before, with the job), async answers 202 and the job's
// progress and result are readable; a refused import answers its code
// and row errors from the job; nothing is imported then.
func TestImportAsJob(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		inst := testenv.NewInstanceWithJobs(t, e)
		a := testenv.NewApp(t, inst.Apps, "dig")
		ctx := context.Background()
		now := time.Now().UTC()
		if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds", Label: "Finds"}, now); err != nil {
			t.Fatal(err)
		}
		for _, f := range []schema.FieldDef{{Name: "label", Label: "Label", Required: true, Unique: true}, {Name: "weight", Label: "Weight", DBType: "float"}} {
			if _, err := schema.AddField(ctx, a.DB, "finds", f, now); err != nil {
				t.Fatal(err)
			}
		}
		admin := testenv.Bearer(testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password))
		preview := func(csv string) string {
			var buf bytes.Buffer
			w := multipart.NewWriter(&buf)
			fw, _ := w.CreateFormFile("file", "finds.csv")
			fw.Write([]byte(csv))
			w.Close()
			req := httptest.NewRequest("POST", "/dig/api/import/preview-file", &buf)
			req.Header.Set("Content-Type", w.FormDataContentType())
			req.Header.Set("Authorization", admin["Authorization"])
			rec := httptest.NewRecorder()
			inst.Server.ServeHTTP(rec, req)
			var m map[string]any
			json.Unmarshal(rec.Body.Bytes(), &m)
			if rec.Code != 200 {
				t.Fatalf("preview: %d %s", rec.Code, rec.Body)
			}
			return m["temp_id"].(string)
		}
		rows := func(from, n int) string {
			var sb strings.Builder
			sb.WriteString("label,weight\n")
			for i := from; i < from+n; i++ {
				fmt.Fprintf(&sb, "F-%d,%d.5\n", i, i%300)
			}
			return sb.String()
		}
		tok := preview(rows(0, 1200))
		rec := testenv.Scenario{Name: "waited for", Method: "POST", URL: "/dig/api/import/data", Headers: admin,
			Body:           fmt.Sprintf(`{"temp_id":%q,"tb":"finds"}`, tok),
			ExpectedStatus: 200, ExpectedContent: []string{`"code":"ok_import_data"`, `"inserted":1200`, `"kind":"import.data"`, `"done":1200`, `"total":1200`}}.Run(t, inst.Server)
		_ = rec

		// async: 202 with the job, then the job holds the result.
		tok = preview(rows(5000, 300))
		rec = testenv.Scenario{Name: "async", Method: "POST", URL: "/dig/api/import/data", Headers: admin,
			Body:           fmt.Sprintf(`{"temp_id":%q,"tb":"finds","async":"1"}`, tok),
			ExpectedStatus: 202, ExpectedContent: []string{`"code":"import_started"`}}.Run(t, inst.Server)
		var started struct {
			Job struct{ ID int64 } `json:"job"`
		}
		json.Unmarshal(rec.Body.Bytes(), &started)
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, m := testenv.Do(t, inst.Server, "GET", fmt.Sprintf("/dig/api/jobs/%d", started.Job.ID), "", admin)
			if m["state"] == "done" {
				res, _ := m["result"].(map[string]any)
				if res["inserted"] != float64(300) || m["done"] != float64(300) {
					t.Fatalf("async job: %v", m)
				}
				break
			}
			if m["state"] == "failed" || time.Now().After(deadline) {
				t.Fatalf("async job: %v", m)
			}
			time.Sleep(20 * time.Millisecond)
		}

		// A duplicate label (unique) in row 3: nothing imported, the row named.
		tok = preview("label,weight\nN-1,1\nN-2,2\nF-7,3\n")
		testenv.Scenario{Name: "refused", Method: "POST", URL: "/dig/api/import/data", Headers: admin,
			Body:           fmt.Sprintf(`{"temp_id":%q,"tb":"finds"}`, tok),
			ExpectedStatus: 400, ExpectedContent: []string{`"code":"import_rows_invalid"`, `"row":3`, `"field":"label"`, `"state":"failed"`}}.Run(t, inst.Server)
		var n int
		if err := a.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+a.DB.Qualify("finds")).Scan(&n); err != nil || n != 1500 {
			t.Fatalf("rows after the refused import: %d %v", n, err)
		}
		testenv.Scenario{Name: "unknown token", Method: "POST", URL: "/dig/api/import/data", Headers: admin,
			Body: `{"temp_id":"0123456789abcdef0123456789abcdef","tb":"finds"}`, ExpectedStatus: 404, ExpectedContent: []string{"import_error_no_file"}}.Run(t, inst.Server)
	})
}
