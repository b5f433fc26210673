package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestFilesCheckCommand: strata files check reports an orphan blob and
// exits 1; --fix removes it (past the grace period) and exits 0.
func TestFilesCheckCommand(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		c := newCLI(t, e)
		ctx := context.Background()
		if code, _, errOut := c.run(ctx, "", nil, "app", "create", "dig", "--email", "a@b.org", "--password", "longenough"); code != 0 {
			t.Fatalf("create: %s", errOut)
		}
		if code, out, errOut := c.run(ctx, "", nil, "files", "check"); code != 0 || !strings.Contains(out, "dig: 0 files, 0 blobs") {
			t.Fatalf("empty: %d %s %s", code, out, errOut)
		}
		orphan := filepath.Join(c.env["STRATA_DATA_DIR"], "files", "dig", "ab", "ab0123456789abcdef0123456789abcd")
		if err := os.MkdirAll(filepath.Dir(orphan), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(orphan, []byte("lost"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, _ := c.run(ctx, "", nil, "files", "check", "--json")
		var reps []map[string]any
		if err := json.Unmarshal([]byte(out), &reps); err != nil || code != 1 || len(reps) != 1 || reps[0]["young_orphans"] != float64(1) {
			t.Fatalf("young orphan: %d %s %v", code, out, err)
		}
		if code, out, _ := c.run(ctx, "", nil, "files", "check", "--fix", "--grace", "1ns"); code != 0 || !strings.Contains(out, "1 removed") {
			t.Fatalf("fix: %d %s", code, out)
		}
		if _, err := os.Stat(orphan); !os.IsNotExist(err) {
			t.Fatalf("orphan still there: %v", err)
		}
		if code, _, errOut := c.run(ctx, "", nil, "files", "check", "--app", "nope"); code != 1 || !strings.Contains(errOut, "nope") {
			t.Fatalf("unknown app: %d %s", code, errOut)
		}
		if code, _, errOut := c.run(ctx, "", nil, "files", "frob"); code != 2 || !strings.Contains(errOut, "frob") {
			t.Fatalf("unknown subcommand: %d %s", code, errOut)
		}
	})
}
