package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/testenv"
)

// nodeArgsEnv, when set in the environment, makes this test binary a
// Strata process: TestMain runs the command line it holds (one argument a
// line) exactly as main does, signals included. Tests that need real
// processes (two nodes, SIGTERM) start the test binary again this way
// instead of building cmd/strata.
const nodeArgsEnv = "STRATA_TEST_NODE_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(nodeArgsEnv); args != "" {
		os.Args = append([]string{"strata"}, strings.Split(args, "\n")...)
		main() // exits
	}
	os.Exit(m.Run())
}

// node is a Strata server running as its own process.
type node struct {
	t      *testing.T
	cmd    *exec.Cmd
	URL    string // http://host:port
	stderr *lockedBuffer
	exited chan struct{}
	code   int
}

// lockedBuffer is the test kit's goroutine-safe buffer.
type lockedBuffer = testenv.SyncBuffer

// nodeEnv is the child's environment: this process's, without any Strata
// or database setting of the machine, plus env.
func nodeEnv(env map[string]string, args []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "STRATA_") || strings.HasPrefix(kv, "DATABASE_URL=") ||
			strings.HasPrefix(kv, "SERVICE_") {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return append(out, "STRATA_LOG_FORMAT=json", nodeArgsEnv+"="+strings.Join(args, "\n"))
}

// startNode runs `strata <args>` as a process with env and waits until it
// listens. When the process exits first, it returns that exit code and
// its stderr instead (err non-nil).
func startNode(t *testing.T, env map[string]string, args ...string) (*node, error) {
	t.Helper()
	n := &node{t: t, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	n.cmd = exec.Command(os.Args[0])
	n.cmd.Env = nodeEnv(env, args)
	pr, pw := io.Pipe()
	n.cmd.Stderr = io.MultiWriter(n.stderr, pw)
	n.cmd.Stdout = io.Discard
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = n.cmd.Wait()
		n.code = n.cmd.ProcessState.ExitCode()
		pw.Close()
		close(n.exited)
	}()
	t.Cleanup(func() { n.kill() })
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var line struct {
				Msg string `json:"msg"`
				URL string `json:"url"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "strata listening" {
				listening <- line.URL
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case n.URL = <-listening:
		return n, nil
	case <-n.exited:
		return n, fmt.Errorf("exit %d: %s", n.code, n.stderr.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("node did not start: %s", n.stderr.String())
	}
	return nil, nil
}

// stop sends sig and waits for the exit code.
func (n *node) stop(sig syscall.Signal) int {
	n.t.Helper()
	_ = n.cmd.Process.Signal(sig)
	select {
	case <-n.exited:
		return n.code
	case <-time.After(60 * time.Second):
		n.t.Fatalf("node did not stop on %v: %s", sig, n.stderr.String())
	}
	return -1
}

func (n *node) kill() {
	select {
	case <-n.exited:
	default:
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
}

// call sends one JSON request to the node and decodes the answer; err is
// a transport error (the node gone, the connection cut).
func (n *node) call(method, path, token, body string) (int, map[string]any, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, n.URL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := nodeClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if m == nil {
		m = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, m, nil
}

// must is call for requests that have to succeed with want.
func (n *node) must(want int, method, path, token, body string) map[string]any {
	n.t.Helper()
	code, m, err := n.call(method, path, token, body)
	if err != nil || code != want {
		n.t.Fatalf("%s %s: %d %v %v (want %d)", method, path, code, m, err, want)
	}
	return m
}

// login signs in and returns the token.
func (n *node) login(app, email, password string) string {
	n.t.Helper()
	m := n.must(200, "POST", "/"+app+"/api/auth/login", "",
		fmt.Sprintf(`{"email":%q,"password":%q}`, email, password))
	tok, _ := m["token"].(string)
	if tok == "" {
		n.t.Fatalf("login answered no token: %v", m)
	}
	return tok
}

var nodeClient = &http.Client{Timeout: 30 * time.Second}

func jsonDecode(raw []byte, v any) error { return json.Unmarshal(raw, v) }
