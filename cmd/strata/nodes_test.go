package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestTwoNodesOnOnePostgres runs two real server processes on one
// PostgreSQL namespace and one S3 bucket, as behind a load balancer, and
// checks that no state lives in one node: what one node does, the other
// sees at once (within the one second the scaling guide promises).
func TestTwoNodesOnOnePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes and builds a plugin")
	}
	testenv.RequireEngine(t, store.Postgres)
	c := newCLI(t, store.Postgres)

	// One S3-compatible store for both nodes (in this process, plain HTTP
	// so that the nodes' processes can reach it).
	s3 := s3mem.New()
	if err := s3.CreateBucket("strata"); err != nil {
		t.Fatal(err)
	}
	s3srv := httptest.NewServer(gofakes3.New(s3, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	defer s3srv.Close()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	shared := map[string]string{
		"DATABASE_URL": c.env["DATABASE_URL"], "STRATA_PG_NAMESPACE": c.env["STRATA_PG_NAMESPACE"],
		"STRATA_BCRYPT_COST": "4", "STRATA_SECRET_KEY": base64.StdEncoding.EncodeToString(key),
		"STRATA_S3_ENDPOINT": s3srv.URL, "STRATA_S3_BUCKET": "strata", "STRATA_S3_REGION": "us-east-1",
		"STRATA_S3_ACCESS_KEY": "k", "STRATA_S3_SECRET_KEY": "s", "STRATA_S3_PATH_STYLE": "1",
		"STRATA_PLUGIN_DIR": buildPlugins(t, "chronology"),
	}
	nodeEnvFor := func() map[string]string {
		env := map[string]string{"STRATA_DATA_DIR": t.TempDir()} // nothing shared on disk
		for k, v := range shared {
			env[k] = v
		}
		return env
	}
	a, err := startNode(t, nodeEnvFor(), "serve", "--addr", "127.0.0.1:0", "--demo")
	if err != nil {
		t.Fatal(err)
	}
	b, err := startNode(t, nodeEnvFor(), "serve", "--addr", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tokA, tokB := a.login("demo", demoEmail, demoPassword), b.login("demo", demoEmail, demoPassword)

	// within polls B until check holds, at most one second after A acted.
	within := func(what string, check func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Second)
		for !check() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not seen on node B within a second", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// A new field made on A is in B's catalog.
	a.must(200, "POST", "/demo/api/config/table/finds/field", tokA, `{"name":"munsell_colour"}`)
	within("a new field", func() bool {
		m := b.must(200, "GET", "/demo/api/config/table/finds/fields", tokB, "")
		return strings.Contains(fmt.Sprint(m), "munsell_colour")
	})

	// A plugin feature turned on on A adds its fields to records read on B.
	units := b.must(200, "GET", "/demo/api/records/units?per_page=1", tokB, "")
	unitID := firstID(t, units)
	a.must(200, "POST", "/demo/api/config/table/units/chronology", tokA, "")
	within("a plugin feature", func() bool {
		m := b.must(200, "GET", fmt.Sprintf("/demo/api/record/units/%d", unitID), tokB, "")
		core, _ := m["core"].(map[string]any)
		_, ok := core["chrono_from"]
		return ok
	})

	// A job started on A is read on B.
	backup := a.must(200, "POST", "/demo/api/backups", tokA, "")
	job, _ := backup["job"].(map[string]any)
	jobID, _ := job["id"].(float64)
	if jobID == 0 {
		t.Fatalf("backup answered no job: %v", backup)
	}
	if m := b.must(200, "GET", fmt.Sprintf("/demo/api/jobs/%d", int64(jobID)), tokB, ""); fmt.Sprint(m["state"], m["job"]) == "" ||
		!strings.Contains(fmt.Sprint(m), "done") {
		t.Fatalf("job %d read on B: %v", int64(jobID), m)
	}

	// A file uploaded through A downloads from B (one S3 bucket).
	sites := b.must(200, "GET", "/demo/api/records/sites?per_page=1", tokB, "")
	siteID := firstID(t, sites)
	content := bytes.Repeat([]byte("strata two nodes\n"), 1000)
	fileID := upload(t, a, tokA, fmt.Sprintf("/demo/api/record/sites/%d/file", siteID), "plan.txt", content)
	if got := download(t, b, tokB, fmt.Sprintf("/demo/api/file/%d/download", fileID)); !bytes.Equal(got, content) {
		t.Fatalf("file from B: %d bytes, want %d", len(got), len(content))
	}

	// Rate limits are one budget for both nodes: 20 OAuth starts a minute
	// per address, spread over A and B; the next is refused on either.
	for i := 0; i < 20; i++ {
		n := []*node{a, b}[i%2]
		if code, m, err := n.call("GET", "/demo/api/auth/oauth/idp_a/redirect", "", ""); err != nil || code == 429 {
			t.Fatalf("OAuth start %d: %d %v %v", i+1, code, m, err)
		}
	}
	if code, m, _ := a.call("GET", "/demo/api/auth/oauth/idp_a/redirect", "", ""); code != 429 {
		t.Fatalf("21st OAuth start over two nodes: %d %v, want 429", code, m)
	}

	// A password changed on A ends the sessions B had issued.
	me, _ := b.must(200, "GET", "/demo/api/info/app", tokB, "")["user"].(map[string]any)
	myID, _ := me["id"].(float64)
	if myID == 0 {
		me, _ = b.must(200, "GET", "/demo/api/auth/refresh", tokB, "")["user"].(map[string]any)
		myID, _ = me["id"].(float64)
	}
	a.must(200, "POST", "/demo/api/user", tokA, fmt.Sprintf(`{"id":%d,"password":"a-new-password-1"}`, int64(myID)))
	within("a password change", func() bool {
		code, _, _ := b.call("GET", "/demo/api/records/sites?per_page=1", tokB, "")
		return code == 401
	})

	// Five failed sign-ins through A lock the account on B too.
	for i := 0; i < 5; i++ {
		if code, m, _ := a.call("POST", "/demo/api/auth/login", "", fmt.Sprintf(`{"email":%q,"password":"wrong-%d"}`, demoEmail, i)); code != 401 {
			t.Fatalf("failed sign-in %d on A: %d %v", i+1, code, m)
		}
	}
	if code, m, _ := b.call("POST", "/demo/api/auth/login", "", fmt.Sprintf(`{"email":%q,"password":"a-new-password-1"}`, demoEmail)); code != 423 || m["code"] != "account_locked" {
		t.Fatalf("right password on B after the lock on A: %d %v", code, m)
	}

	for _, n := range []*node{a, b} {
		if code := n.stop(syscall.SIGTERM); code != 0 {
			t.Errorf("node exit %d: %s", code, n.stderr.String())
		}
	}
}

// firstID is the id of the first record of a list answer.
func firstID(t *testing.T, list map[string]any) int {
	t.Helper()
	rows, _ := list["data"].([]any)
	if len(rows) == 0 {
		t.Fatalf("empty list: %v", list)
	}
	row, _ := rows[0].(map[string]any)
	if core, ok := row["core"].(map[string]any); ok {
		row = core
	}
	id, _ := row["id"].(float64)
	return int(id)
}

func upload(t *testing.T, n *node, tok, path, name string, content []byte) int {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	fw, _ := w.CreateFormFile("file", name)
	_, _ = fw.Write(content)
	_ = w.Close()
	status, raw := n.raw(t, "POST", path, tok, w.FormDataContentType(), &body)
	var m struct {
		ID   int `json:"id"`
		File struct {
			ID int `json:"id"`
		} `json:"file"`
	}
	if status != 200 || jsonDecode(raw, &m) != nil || (m.ID == 0 && m.File.ID == 0) {
		t.Fatalf("upload: %d %s", status, raw)
	}
	if m.ID != 0 {
		return m.ID
	}
	return m.File.ID
}

func download(t *testing.T, n *node, tok, path string) []byte {
	t.Helper()
	status, raw := n.raw(t, "GET", path, tok, "", nil)
	if status != 200 {
		t.Fatalf("download: %d %s", status, raw)
	}
	return raw
}

// raw sends a request with a bearer token and returns the status and the
// body's bytes.
func (n *node) raw(t *testing.T, method, path, tok, contentType string, body io.Reader) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, n.URL+path, body)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := nodeClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// buildPlugins builds the named plugins of this repository into a new
// folder and returns it.
func buildPlugins(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./plugins/"+name)
		cmd.Dir = root
		cmd.Env = os.Environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build plugin %s: %v\n%s", name, err, out)
		}
	}
	return dir
}
