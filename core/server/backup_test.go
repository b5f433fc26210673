package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/demo"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// The backup routes over HTTP on both engines: create (a job the answer
// waits for), list, download, upload, restore while other requests run,
// delete, and the refusals.
func TestBackupsOverHTTP(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		inst := testenv.NewInstanceWithJobs(t, e)
		a := testenv.NewApp(t, inst.Apps, "dig")
		ctx := context.Background()
		if err := demo.Seed(ctx, a, demo.Small, 1, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		testenv.NewUser(t, a, "Reader", "reader@example.org", auth.Reader)
		admin := testenv.Bearer(testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password))
		reader := testenv.Bearer(testenv.Login(t, inst.Server, "dig", "reader@example.org", testenv.Password))

		testenv.Scenario{Name: "empty list", Method: "GET", URL: "/dig/api/backups", Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{`"backups":[]`, `"engine":"` + string(e) + `"`}}.Run(t, inst.Server)
		testenv.Scenario{Name: "a reader may not", Method: "POST", URL: "/dig/api/backups", Headers: reader,
			ExpectedStatus: 403}.Run(t, inst.Server)
		rec := testenv.Scenario{Name: "create", Method: "POST", URL: "/dig/api/backups", Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{`"code":"ok_backup"`, `"state":"done"`}}.Run(t, inst.Server)
		var created struct {
			File string `json:"file"`
			Job  struct {
				ID int64 `json:"id"`
			} `json:"job"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || created.File == "" {
			t.Fatalf("create: %s", rec.Body)
		}
		testenv.Scenario{Name: "the job is readable", Method: "GET", URL: fmt.Sprintf("/dig/api/jobs/%d", created.Job.ID), Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{`"kind":"backup.create"`, `"state":"done"`}}.Run(t, inst.Server)
		testenv.Scenario{Name: "listed", Method: "GET", URL: "/dig/api/backups", Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{created.File, `"source_engine":"` + string(e) + `"`, `"size_mb"`, `"formatted_time"`}}.Run(t, inst.Server)

		// Download it, then change the app.
		req := httptest.NewRequest("GET", "/dig/api/backup/"+created.File+"/download", nil)
		req.Header.Set("Authorization", admin["Authorization"])
		dl := httptest.NewRecorder()
		inst.Server.ServeHTTP(dl, req)
		if dl.Code != 200 || dl.Header().Get("Content-Type") != "application/gzip" || dl.Body.Len() < 100 {
			t.Fatalf("download: %d %s (%d bytes)", dl.Code, dl.Header().Get("Content-Type"), dl.Body.Len())
		}
		archive := dl.Body.Bytes()
		var before int
		if err := a.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+a.DB.Qualify("finds")).Scan(&before); err != nil {
			t.Fatal(err)
		}
		if _, err := a.DB.Exec(ctx, `DELETE FROM `+a.DB.Qualify("finds")+` WHERE id > 3`); err != nil {
			t.Fatal(err)
		}

		for _, s := range []testenv.Scenario{
			{Name: "path tricks are not backups", Method: "GET", URL: "/dig/api/backup/.dig_20200101_000000_abcdef.tar.gz.partial/download", Headers: admin, ExpectedStatus: 404, ExpectedContent: []string{"backup_not_found"}},
			{Name: "unknown backup", Method: "POST", URL: "/dig/api/backup/dig_20200101_000000_abcdef.tar.gz/restore", Headers: admin, ExpectedStatus: 404, ExpectedContent: []string{"backup_not_found"}},
			{Name: "a reader may not restore", Method: "POST", URL: "/dig/api/backup/" + created.File + "/restore", Headers: reader, ExpectedStatus: 403},
		} {
			s.Run(t, inst.Server)
		}

		// Restore while readers keep reading: every answer is whole.
		var stop atomic.Bool
		var wg sync.WaitGroup
		var bad atomic.Int64
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					r := httptest.NewRequest("GET", "/dig/api/records/finds?per_page=5", nil)
					r.Header.Set("Authorization", admin["Authorization"])
					w := httptest.NewRecorder()
					inst.Server.ServeHTTP(w, r)
					if w.Code != 200 && w.Code != 503 {
						bad.Add(1)
						t.Logf("during restore: %d %s", w.Code, w.Body)
					}
				}
			}()
		}
		testenv.Scenario{Name: "restore", Method: "POST", URL: "/dig/api/backup/" + created.File + "/restore", Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{`"code":"ok_backup_restored"`}}.Run(t, inst.Server)
		stop.Store(true)
		wg.Wait()
		if bad.Load() > 0 {
			t.Fatalf("%d requests failed during the restore", bad.Load())
		}
		b, err := inst.Apps.Get(ctx, "dig")
		if err != nil {
			t.Fatal(err)
		}
		var after int
		if err := b.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+b.DB.Qualify("finds")).Scan(&after); err != nil {
			t.Fatal(err)
		}
		if after != before {
			t.Fatalf("finds after restore: %d, want %d", after, before)
		}
		// The restore is in the restored app's log.
		testenv.Scenario{Name: "logged", Method: "GET", URL: "/dig/api/logs", Headers: admin, ExpectedStatus: 200,
			ExpectedContent: []string{"/dig/api/backup/" + created.File + "/restore"}}.Run(t, inst.Server)
		// The same token still works (the restored app has its secret).
		testenv.Scenario{Name: "signed in still", Method: "GET", URL: "/dig/api/records/finds?per_page=1", Headers: admin, ExpectedStatus: 200}.Run(t, inst.Server)

		// Upload: the downloaded archive, then a damaged one.
		up := func(data []byte) *httptest.ResponseRecorder {
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			fw, _ := mw.CreateFormFile("file", "x.tar.gz")
			fw.Write(data)
			mw.Close()
			r := httptest.NewRequest("POST", "/dig/api/backups/upload", &body)
			r.Header.Set("Content-Type", mw.FormDataContentType())
			r.Header.Set("Authorization", admin["Authorization"])
			w := httptest.NewRecorder()
			inst.Server.ServeHTTP(w, r)
			return w
		}
		if w := up(archive); w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte("ok_backup_uploaded")) {
			t.Fatalf("upload: %d %s", w.Code, w.Body)
		}
		if w := up(archive[:len(archive)-200]); w.Code != http.StatusBadRequest || !bytes.Contains(w.Body.Bytes(), []byte("backup_")) {
			t.Fatalf("truncated upload: %d %s", w.Code, w.Body)
		}
		testenv.Scenario{Name: "two backups now", Method: "GET", URL: "/dig/api/backups", Headers: admin, ExpectedStatus: 200}.Run(t, inst.Server)
		testenv.Scenario{Name: "delete", Method: "DELETE", URL: "/dig/api/backup/" + created.File, Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{"ok_backup_deleted"}}.Run(t, inst.Server)
		testenv.Scenario{Name: "delete again", Method: "DELETE", URL: "/dig/api/backup/" + created.File, Headers: admin,
			ExpectedStatus: 404, ExpectedContent: []string{"backup_not_found"}}.Run(t, inst.Server)
	})
}

// TestRestoreRefusesReservedNames: an app made before sqlite_ and pg_ were
// reserved may hold a table or field named so (PostgreSQL took pg_ and
// sqlite_ tables, both engines pg_ ones); its backup is refused on restore
// with the name's code on both engines (a sqlite_ table could never be
// made on SQLite), the live app untouched, instead of restoring on one
// engine and failing with 500 on the other. A table's name is refused
// before the job starts, a field's when the catalog's tables are made.
func TestRestoreRefusesReservedNames(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		for _, c := range []struct {
			name, code string
			rename     func(db *store.DB) []string
		}{
			{"table", "invalid_table_name", func(db *store.DB) []string {
				return []string{`ALTER TABLE ` + db.Qualify("notes") + ` RENAME TO pg_notes`,
					`UPDATE ` + db.Sys("tables") + ` SET name = 'pg_notes' WHERE name = 'notes'`}
			}},
			{"field", "invalid_field_name", func(db *store.DB) []string {
				return []string{`ALTER TABLE ` + db.Qualify("notes") + ` RENAME COLUMN note TO sqlite_note`,
					`UPDATE ` + db.Sys("fields") + ` SET name = 'sqlite_note' WHERE name = 'note'`}
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				inst := testenv.NewInstanceWithJobs(t, e)
				a := testenv.NewApp(t, inst.Apps, "dig")
				admin := testenv.Bearer(testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password))
				for _, s := range []testenv.Scenario{
					{Method: "POST", URL: "/dig/api/config/tables", Body: `{"name":"notes"}`, ExpectedStatus: 200},
					{Method: "POST", URL: "/dig/api/config/table/notes/field", Body: `{"name":"note"}`, ExpectedStatus: 200},
				} {
					s.Headers = admin
					s.Run(t, inst.Server)
				}
				ctx := context.Background()
				for _, q := range c.rename(a.DB) {
					if _, err := a.DB.Exec(ctx, q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				rec := testenv.Scenario{Method: "POST", URL: "/dig/api/backups", Headers: admin, ExpectedStatus: 200}.Run(t, inst.Server)
				var created struct{ File string }
				if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || created.File == "" {
					t.Fatalf("backup: %s", rec.Body)
				}
				testenv.Scenario{Method: "POST", URL: "/dig/api/backup/" + created.File + "/restore", Headers: admin,
					ExpectedStatus: 400, ExpectedContent: []string{`"code":"` + c.code + `"`, `"reserved_prefix"`}}.Run(t, inst.Server)
				live, err := inst.Apps.Get(ctx, "dig")
				if err != nil {
					t.Fatal(err)
				}
				var n int
				if err := live.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+live.DB.Sys("tables")).Scan(&n); err != nil || n != 1 {
					t.Fatalf("the live app after a refused restore: %d tables, %v", n, err)
				}
			})
		}
	})
}
