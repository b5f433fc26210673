package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// cli runs commands in-process against one storage configuration.
type cli struct {
	t   *testing.T
	env map[string]string
}

func newCLI(t *testing.T, e store.Engine) *cli {
	c := &cli{t: t, env: map[string]string{"STRATA_DATA_DIR": t.TempDir(), "STRATA_BCRYPT_COST": "4"}}
	if e == store.Postgres {
		url, _ := testenv.PostgresURL()
		ns := "tcli" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
		c.env["DATABASE_URL"], c.env["STRATA_PG_NAMESPACE"] = url, ns
		t.Cleanup(func() {
			b, err := store.OpenPostgres(context.Background(), url, store.PostgresOptions{Namespace: ns})
			if err == nil {
				_ = b.DestroyNamespace(context.Background())
				b.Close()
			}
		})
	}
	return c
}

func (c *cli) run(ctx context.Context, stdin string, ready func(string), args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(ctx, args, env{
		getenv: func(k string) string { return c.env[k] },
		stdin:  strings.NewReader(stdin), stdout: &out, stderr: &errOut, ready: ready,
	})
	return code, out.String(), errOut.String()
}

func TestAppCommands(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		c := newCLI(t, e)
		ctx := context.Background()
		for _, tc := range []struct {
			name   string
			stdin  string
			args   []string
			code   int
			stdout string
			stderr string
		}{
			{name: "version", args: []string{"version"}, stdout: "strata 5."},
			{name: "no command", args: nil, code: 2, stderr: "Usage:"},
			{name: "unknown command", args: []string{"frobnicate"}, code: 2, stderr: `unknown command "frobnicate"`},
			{name: "create needs email", args: []string{"app", "create", "dig"}, code: 2, stderr: "--email"},
			{name: "create with reserved name", args: []string{"app", "create", "login", "--email", "a@b.org", "--password", "longenough"}, code: 1, stderr: "invalid_app_name"},
			{name: "create with short password", args: []string{"app", "create", "dig", "--email", "a@b.org", "--password", "short"}, code: 1, stderr: "password_too_short"},
			{name: "empty list", args: []string{"app", "list"}, stdout: ""},
			{name: "create, password on stdin", stdin: "longenough1\n", args: []string{"app", "create", "dig", "--email", "Boss@Example.org", "--definition", "Excavation"}, stdout: "created application dig with super_admin boss@example.org"},
			{name: "create again", args: []string{"app", "create", "dig", "--email", "a@b.org", "--password", "longenough"}, code: 1, stderr: "app_exists"},
			{name: "list shows it", args: []string{"app", "list"}, stdout: "dig\tExcavation\n"},
			{name: "migrate is a no-op when current", args: []string{"migrate"}, stdout: "up to date"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				code, out, errOut := c.run(ctx, tc.stdin, nil, tc.args...)
				if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errOut, tc.stderr) {
					t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
				}
			})
		}
	})
}

// TestServeAndGracefulShutdown starts the real server on a TCP port,
// creates an app with one HTTP call, and stops it as SIGTERM would.
func TestServeAndGracefulShutdown(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		c := newCLI(t, e)
		c.env["SERVICE_ALLOW_NEW_APP"] = "1"
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		addrc := make(chan string, 1)
		done := make(chan int, 1)
		var stderr string
		go func() {
			code, _, errOut := c.run(ctx, "", func(a string) { addrc <- a }, "serve", "--addr", "127.0.0.1:0")
			stderr = errOut
			done <- code
		}()
		var addr string
		select {
		case addr = <-addrc:
		case code := <-done:
			t.Fatalf("serve exited early with %d: %s", code, stderr)
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not start")
		}

		resp, err := http.Post("http://"+addr+"/api/new-app", "application/json",
			strings.NewReader(`{"name":"site","email":"a@b.org","password":"longenough1"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m map[string]any
		if resp.StatusCode != 200 || json.Unmarshal(body, &m) != nil || m["code"] != "ok_app_created" {
			t.Fatalf("create over TCP: %d %s", resp.StatusCode, body)
		}
		// The job system runs beside the server: the admin's job list
		// answers (503 jobs_unavailable without one).
		if code, body := jobList(t, addr); code != 200 || !strings.Contains(body, `"total":0`) {
			t.Fatalf("GET /site/api/jobs: %d %s", code, body)
		}

		cancel() // what SIGINT/SIGTERM do through signal.NotifyContext
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("serve exit code %d: %s", code, stderr)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not stop")
		}
		for _, want := range []string{"strata listening", "shutting down", "stopped"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("log lacks %q:\n%s", want, stderr)
			}
		}
		// The app survives the restart.
		if code, out, _ := c.run(context.Background(), "", nil, "app", "list"); code != 0 || !strings.HasPrefix(out, "site\t") {
			t.Fatalf("after restart: %d %q", code, out)
		}
	})
}

// jobList signs in as the first admin of site and lists its jobs.
func jobList(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/site/api/auth/login", "application/json",
		strings.NewReader(`{"email":"a@b.org","password":"longenough1"}`))
	if err != nil {
		t.Fatal(err)
	}
	var login struct {
		Token string `json:"token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&login)
	resp.Body.Close()
	if err != nil || login.Token == "" {
		t.Fatalf("login: %d %v", resp.StatusCode, err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/site/api/jobs", nil)
	req.Header.Set("Authorization", "Bearer "+login.Token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestServeDemo: on an empty instance --demo creates the demo app, prints
// the credentials and a curl line, and those credentials work.
func TestServeDemo(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		c := newCLI(t, e)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		addrc := make(chan string, 1)
		done := make(chan struct{})
		var out, errOut string
		go func() {
			defer close(done)
			_, out, errOut = c.run(ctx, "", func(a string) { addrc <- a }, "serve", "--addr", "127.0.0.1:0", "--demo")
		}()
		var addr string
		select {
		case addr = <-addrc:
		case <-done:
			t.Fatalf("serve exited: %s", errOut)
		case <-time.After(60 * time.Second):
			t.Fatal("serve did not start")
		}
		resp, err := http.Post("http://"+addr+"/demo/api/auth/login", "application/json",
			strings.NewReader(`{"email":"`+demoEmail+`","password":"`+demoPassword+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("demo login: %d %s", resp.StatusCode, body)
		}
		cancel()
		<-done
		for _, want := range []string{"http://" + addr, demoEmail, demoPassword, "/demo/api/records/finds?filter"} {
			if !strings.Contains(out, want) {
				t.Errorf("banner lacks %q:\n%s", want, out)
			}
		}
	})
}
