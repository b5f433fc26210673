package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// freshDataDir points c at a data folder that does not exist yet, so a
// test can tell whether a command made it.
func freshDataDir(t *testing.T, c *cli) string {
	dir := filepath.Join(t.TempDir(), "data")
	c.env["STRATA_DATA_DIR"] = dir
	return dir
}

func assertAbsent(t *testing.T, dir string) {
	t.Helper()
	if entries, err := os.ReadDir(dir); err == nil {
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		t.Fatalf("the data folder %s was made (%v)", dir, names)
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// TestServePortInUse: an address already taken stops serve at once, in
// one line naming the address and how to choose another, before the data
// folder, the instance key or a plugin exists.
func TestServePortInUse(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		addr := busy.Addr().String()
		c := newCLI(t, e)
		dir := freshDataDir(t, c)
		// The plugins of the tree would start (and make their sockets)
		// before the listen of old: point serve at a folder holding one.
		c.env["STRATA_PLUGIN_DIR"] = buildPlugins(t, "example")
		for _, how := range []struct {
			name string
			args []string
		}{
			{"flag", []string{"serve", "--addr", addr, "--demo"}},
			{"environment", []string{"serve", "--demo"}},
		} {
			t.Run(how.name, func(t *testing.T) {
				c.env["STRATA_ADDR"] = addr
				defer delete(c.env, "STRATA_ADDR")
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				code, out, errOut := c.run(ctx, "", nil, how.args...)
				if code != 1 {
					t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", code, out, errOut)
				}
				for _, want := range []string{"cannot listen on " + addr, "already in use", "STRATA_ADDR=", "--addr"} {
					if !strings.Contains(errOut, want) {
						t.Errorf("stderr lacks %q: %s", want, errOut)
					}
				}
				if n := strings.Count(strings.TrimSpace(errOut), "\n"); n != 0 {
					t.Errorf("%d lines on stderr, want one:\n%s", n+1, errOut)
				}
				assertAbsent(t, dir)
			})
		}
	})
}

// TestAdminCommandsRefuseBeforeMakingAnything: a command that refuses its
// arguments leaves no data folder or instance key behind, and a missing
// parameter is named with where it comes from.
func TestAdminCommandsRefuseBeforeMakingAnything(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		for _, tc := range []struct {
			name   string
			args   []string
			code   int
			stderr []string
			sqlite bool // a missing data folder: PostgreSQL keeps the applications elsewhere
		}{
			{name: "create with a bad name", args: []string{"app", "create", "Bad-Name", "--email", "a@b.org", "--password", "longenough"},
				code: 1, stderr: []string{"invalid_app_name", "reason: pattern"}},
			{name: "create with a reserved name", args: []string{"app", "create", "login", "--email", "a@b.org", "--password", "longenough"},
				code: 1, stderr: []string{"invalid_app_name", "reason: reserved"}},
			{name: "create with a short password", args: []string{"app", "create", "dig", "--email", "a@b.org", "--password", "short"},
				code: 1, stderr: []string{"password_too_short"}},
			{name: "create with a bad email", args: []string{"app", "create", "dig", "--email", "not-an-address", "--password", "longenough"},
				code: 1, stderr: []string{"email"}},
			{name: "create without a password", args: []string{"app", "create", "dig", "--email", "a@b.org"},
				code: 2, stderr: []string{"password", "--password", "STRATA_ADMIN_PASSWORD", "standard input"}},
			{name: "create without an email", args: []string{"app", "create", "dig", "--password", "longenough"},
				code: 2, stderr: []string{"--email"}},
			{name: "create without a name", args: []string{"app", "create", "--email", "a@b.org", "--password", "longenough"},
				code: 2, stderr: []string{"NAME"}},
			{name: "export of a bad name", args: []string{"app", "export", "Bad-Name"},
				code: 1, stderr: []string{"invalid_app_name"}},
			{name: "import as a bad name", args: []string{"app", "import", "archive.zip", "--as", "Bad-Name"},
				code: 1, stderr: []string{"invalid_app_name"}},
			{name: "import of a missing archive", args: []string{"app", "import", "/nonexistent/archive.zip", "--as", "dig"},
				code: 1, stderr: []string{"/nonexistent/archive.zip"}},
			// Commands that read applications do not make a folder a
			// mistyped --data-dir names.
			{name: "list without a data folder", args: []string{"app", "list"}, sqlite: true,
				code: 1, stderr: []string{"no data folder at ", "--data-dir", "STRATA_DATA_DIR"}},
			{name: "migrate without a data folder", args: []string{"migrate"}, sqlite: true,
				code: 1, stderr: []string{"no data folder at "}},
			{name: "export without a data folder", args: []string{"app", "export", "dig"}, sqlite: true,
				code: 1, stderr: []string{"no data folder at "}},
			{name: "secrets rotate without a data folder", args: []string{"secrets", "rotate"}, sqlite: true,
				code: 1, stderr: []string{"no data folder at "}},
			{name: "files check without a data folder", args: []string{"files", "check"}, sqlite: true,
				code: 1, stderr: []string{"no data folder at "}},
		} {
			if tc.sqlite && e != store.SQLite {
				continue
			}
			t.Run(tc.name, func(t *testing.T) {
				c := newCLI(t, e)
				dir := freshDataDir(t, c)
				code, out, errOut := c.run(ctx, "", nil, tc.args...)
				if code != tc.code {
					t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
				}
				for _, want := range tc.stderr {
					if !strings.Contains(errOut, want) {
						t.Errorf("stderr lacks %q: %s", want, errOut)
					}
				}
				assertAbsent(t, dir)
			})
		}
	})
}

// serveOnce starts serve with args, waits until it listens, runs during
// with its address, stops it and returns what it printed.
func serveOnce(t *testing.T, c *cli, during func(addr string), args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, stdout, stderr = c.run(ctx, "", func(a string) { addrc <- a }, args...)
	}()
	select {
	case addr := <-addrc:
		during(addr)
	case <-done:
		t.Fatalf("serve exited: %s", stderr)
	case <-time.After(90 * time.Second):
		t.Fatal("serve did not start")
	}
	cancel()
	<-done
	return stdout, stderr
}

// TestServeDemoBannerEveryStart: the way in (URL, demo sign-in, curl
// lines) is printed at every start with --demo, not only the one that
// made the demo; an instance with other applications and no demo prints
// none (it has no demo to sign in to).
func TestServeDemoBannerEveryStart(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		c := newCLI(t, e)
		for i := 1; i <= 2; i++ {
			var addr string
			out, errOut := serveOnce(t, c, func(a string) { addr = a }, "serve", "--addr", "127.0.0.1:0", "--demo")
			for _, want := range []string{"http://" + addr + "/?app=demo", demoEmail, demoPassword, "/demo/api/records/finds?filter"} {
				if !strings.Contains(out, want) {
					t.Errorf("start %d: banner lacks %q:\nstdout: %s\nstderr: %s", i, want, out, errOut)
				}
			}
			if created := strings.Contains(errOut, "demo application created"); created != (i == 1) {
				t.Errorf("start %d: demo created %v", i, created)
			}
			// No plugin binaries here: the demo still starts and the log
			// names each feature it left off.
			if i == 1 {
				// The demo's own requests to the server are not in the
				// access log at its default level (info).
				if strings.Contains(errOut, "/demo/api/saved-queries") || strings.Contains(errOut, "/demo/api/geoface/feature") {
					t.Errorf("the demo's seeding requests are logged:\n%s", errOut)
				}
				for _, f := range []string{"chronology", "radiocarbon", "osteology"} {
					if !strings.Contains(errOut, "feature="+f) || !strings.Contains(errOut, "its plugin is not running") {
						t.Errorf("the log does not say %s is left off:\n%s", f, errOut)
					}
				}
			}
		}

		other := newCLI(t, e)
		if code, _, errOut := other.run(context.Background(), "", nil, "app", "create", "dig", "--email", "a@b.org", "--password", "longenough"); code != 0 {
			t.Fatal(errOut)
		}
		if out, _ := serveOnce(t, other, func(string) {}, "serve", "--addr", "127.0.0.1:0", "--demo"); strings.Contains(out, demoPassword) {
			t.Errorf("banner without a demo application:\n%s", out)
		}
	})
}
