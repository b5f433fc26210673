package server_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/demo"
	"github.com/strata-archaeo/strata/core/files/s3store"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// With the files on S3, backups are objects of the same bucket: another
// node (its own empty data folder) lists, downloads and restores them.
func TestBackupsOnS3(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		o := fakeS3(t, "strata")
		st, err := s3store.New(o)
		if err != nil {
			t.Fatal(err)
		}
		nodeA := testenv.NewInstanceWithJobsDeps(t, e, server.Deps{Files: st})
		nodeB := testenv.NewInstanceWith(t, e, server.Deps{Apps: nodeA.Apps, Files: st, Jobs: nodeA.Server.Jobs()})
		a := testenv.NewApp(t, nodeA.Apps, "dig")
		if err := demo.Seed(context.Background(), a, demo.Small, 1, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		admin := testenv.Bearer(testenv.Login(t, nodeA.Server, "dig", "admin@example.org", testenv.Password))
		rec := testenv.Scenario{Name: "create on A", Method: "POST", URL: "/dig/api/backups", Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{`"ok_backup"`}}.Run(t, nodeA.Server)
		var created struct{ File string }
		json.Unmarshal(rec.Body.Bytes(), &created)
		found := false
		for _, k := range s3Objects(t, o) {
			if k == "nodes/backups/dig/"+created.File {
				found = true
			}
		}
		if !found {
			t.Fatalf("backup %s not in the bucket: %v", created.File, s3Objects(t, o))
		}
		testenv.Scenario{Name: "listed on B", Method: "GET", URL: "/dig/api/backups", Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{created.File, `"source_engine":"` + string(e) + `"`}}.Run(t, nodeB.Server)
		req := httptest.NewRequest("GET", "/dig/api/backup/"+created.File+"/download", nil)
		req.Header.Set("Authorization", admin["Authorization"])
		dl := httptest.NewRecorder()
		nodeB.Server.ServeHTTP(dl, req)
		if dl.Code != 200 || dl.Header().Get("Content-Type") != "application/gzip" || dl.Body.Len() < 100 {
			t.Fatalf("download on B: %d %d bytes", dl.Code, dl.Body.Len())
		}
		testenv.Scenario{Name: "restore on B", Method: "POST", URL: "/dig/api/backup/" + created.File + "/restore", Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{`"ok_backup_restored"`}}.Run(t, nodeB.Server)
		testenv.Scenario{Name: "delete on B", Method: "DELETE", URL: "/dig/api/backup/" + created.File, Headers: admin,
			ExpectedStatus: 200}.Run(t, nodeB.Server)
		testenv.Scenario{Name: "gone on A", Method: "GET", URL: "/dig/api/backups", Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{`"backups":[]`}}.Run(t, nodeA.Server)
		for _, k := range s3Objects(t, o) {
			if strings.Contains(k, "backups/") {
				t.Fatalf("left in the bucket: %s", k)
			}
		}
	})
}
