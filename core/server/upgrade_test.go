package server_test

import (
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestUpgradeMinor: GET /upgrade/status names pending system migrations
// (BraDypUS's type/pending), POST /upgrade/minor (admin) applies them.
func TestUpgradeMinor(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		ctx, db := t.Context(), f.app.DB
		// Undo the last two migrations, as if the app had been left behind.
		for _, q := range []string{`DROP TABLE ` + db.Sys("file_links"), `DROP TABLE ` + db.Sys("files"), `DELETE FROM ` + db.Sys("migrations") + ` WHERE id IN (12, 13)`} {
			if _, err := db.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range []testenv.Scenario{
			{Name: "pending is named", URL: "/dig/api/upgrade/status", ExpectedStatus: 200,
				ExpectedContent: []string{`"type":"minor"`, `"upgrade":"minor"`, `"pending":["0012_files","0013_file_thumbs"]`, `"affects_files":false`}},
			{Name: "signed in only", Method: "POST", URL: "/dig/api/upgrade/minor", ExpectedStatus: 401},
			{Name: "writer may not", Method: "POST", URL: "/dig/api/upgrade/minor", Headers: testenv.Bearer(f.writer), ExpectedStatus: 403,
				ExpectedContent: []string{`"code":"not_enough_privilege"`}},
			{Name: "admin applies", Method: "POST", URL: "/dig/api/upgrade/minor", Headers: testenv.Bearer(f.super), ExpectedStatus: 200,
				ExpectedContent: []string{`"code":"upgrade_complete"`, `"applied":["0012_files","0013_file_thumbs"]`}},
			{Name: "nothing pending after", URL: "/dig/api/upgrade/status", ExpectedStatus: 200,
				ExpectedContent: []string{`"type":null`, `"upgrade":null`}, NotExpectedContent: []string{"pending"}},
			{Name: "again is a no-op", Method: "POST", URL: "/dig/api/upgrade/minor", Headers: testenv.Bearer(f.super), ExpectedStatus: 200,
				ExpectedContent: []string{`"code":"upgrade_complete"`, `"applied":[]`}},
			{Name: "tables readable again", URL: "/dig/api/config/tables", Headers: testenv.Bearer(f.super), ExpectedStatus: 200},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
	})
}
