package server_test

import (
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/publish/doi"
	"github.com/strata-archaeo/strata/core/publish/doi/doitest"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// doiSnap is what the DOI tests read of a snapshot.
type doiSnap struct {
	ID        int64   `json:"id"`
	Version   *int64  `json:"version"`
	Status    string  `json:"status"`
	DOI       *string `json:"doi"`
	DOIStatus *string `json:"doi_status"`
	DOIError  *struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	} `json:"doi_error"`
}

func (s doiSnap) doiStatus() string {
	if s.DOIStatus == nil {
		return ""
	}
	return *s.DOIStatus
}

// getSnap reads a snapshot through the API, returning its raw body too.
func getSnap(t *testing.T, inst *testenv.Instance, h map[string]string, id int64) (doiSnap, string) {
	t.Helper()
	rec := testenv.Scenario{Name: "snapshot", URL: fmt.Sprintf("/dig/api/publish/snapshots/%d", id), Headers: h, ExpectedStatus: 200}.Run(t, inst.Server)
	var out struct {
		Snapshot doiSnap `json:"snapshot"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return out.Snapshot, rec.Body.String()
}

// waitDOI waits until the snapshot's minting has ended (registered or
// failed) and no job of the application runs any more. The deadline only
// keeps a broken run from hanging.
func waitDOI(t *testing.T, inst *testenv.Instance, h map[string]string, id int64) doiSnap {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s, _ := getSnap(t, inst, h, id)
		if st := s.doiStatus(); (st == "registered" || st == "failed") && idle(t, inst, h) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("snapshot %d: minting did not end (doi_status %q)", id, s.doiStatus())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// idle reports whether every job of the application has finished.
func idle(t *testing.T, inst *testenv.Instance, h map[string]string) bool {
	t.Helper()
	rec := testenv.Scenario{Name: "jobs", URL: "/dig/api/jobs?per_page=100", Headers: h, ExpectedStatus: 200}.Run(t, inst.Server)
	var out struct {
		Data []struct {
			State string `json:"state"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	for _, j := range out.Data {
		if j.State == "queued" || j.State == "running" {
			return false
		}
	}
	return true
}

// retryDOI asks for a retry and waits for its job and outcome.
func retryDOI(t *testing.T, inst *testenv.Instance, h map[string]string, id int64) doiSnap {
	t.Helper()
	waitJob(t, inst, h, startDOI(t, inst, h, id))
	return waitDOI(t, inst, h, id)
}

// startDOI asks for a (re)minting and returns its job's id.
func startDOI(t *testing.T, inst *testenv.Instance, h map[string]string, id int64) int64 {
	t.Helper()
	rec := testenv.Scenario{Name: "retry", Method: "POST", URL: fmt.Sprintf("/dig/api/publish/snapshots/%d/doi", id), Headers: h, ExpectedStatus: 202,
		ExpectedContent: []string{`"code":"doi_started"`, `"job":{`}}.Run(t, inst.Server)
	var out struct {
		Job struct {
			ID int64 `json:"id"`
		} `json:"job"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Job.ID == 0 {
		t.Fatalf("retry answer %s", rec.Body.String())
	}
	return out.Job.ID
}

// waitJob waits for a job to end.
func waitJob(t *testing.T, inst *testenv.Instance, h map[string]string, job int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, m := testenv.Do(t, inst.Server, "GET", fmt.Sprintf("/dig/api/jobs/%d", job), "", h)
		if st, _ := m["state"].(string); st == "done" || st == "failed" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d did not end: %v", job, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gate is a proxy in front of a fake service that, once closed, holds
// every request until opened again, telling the test each one arrived.
type gate struct {
	URL     string
	mu      sync.Mutex
	hold    chan struct{}
	entered chan struct{}
}

func newGate(t *testing.T, target string) *gate {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{entered: make(chan struct{}, 100)}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		hold := g.hold
		g.mu.Unlock()
		if hold != nil {
			g.entered <- struct{}{}
			<-hold
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(g.open) // before Close: no handler stays blocked
	g.URL = srv.URL
	return g
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hold == nil {
		g.hold = make(chan struct{})
	}
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hold != nil {
		close(g.hold)
		g.hold = nil
	}
}

// doiConfig is pubConfig with a DOI setting (JSON of its "doi" key).
func doiConfig(doiJSON, secret string) string {
	body := strings.Replace(pubConfig, `"language":"en"`, `"language":"en","doi":`+doiJSON, 1)
	if secret != "" || strings.Contains(doiJSON, "provider") {
		s, _ := json.Marshal(secret)
		body = strings.Replace(body, `"licence":"CC-BY-4.0"`, `"licence":"CC-BY-4.0","doi_secret":`+string(s), 1)
	}
	return body
}

// doiSetup is an instance with the excavation, an admin and a writer.
func doiSetup(t *testing.T, e store.Engine) (*testenv.Instance, *apps.App, map[string]string, map[string]string) {
	inst := testenv.NewInstanceWithJobs(t, e)
	a := testenv.NewApp(t, inst.Apps, "dig")
	newPubFix(t, a)
	testenv.NewUser(t, a, "pub@example.org", "pub@example.org", auth.Admin)
	testenv.NewUser(t, a, "w@example.org", "w@example.org", auth.Writer)
	h := testenv.Bearer(testenv.Login(t, inst.Server, "dig", "pub@example.org", testenv.Password))
	w := testenv.Bearer(testenv.Login(t, inst.Server, "dig", "w@example.org", testenv.Password))
	return inst, a, h, w
}

// fault is one failure injected into a version's minting: at step, in
// mode (none: the version mints cleanly).
type fault struct {
	step string
	mode doitest.Mode
}

func (f fault) String() string {
	if f.step == "" {
		return "clean"
	}
	return fmt.Sprintf("%s/%d", f.step, f.mode)
}

// mintVersions publishes one version per fault: each fault fires, the
// minting fails with doi_unavailable (retryable), a retry finishes it and
// a second retry is refused. Returns the snapshots in order.
func mintVersions(t *testing.T, inst *testenv.Instance, h map[string]string, faults []fault, arm func(fault), pending func() int) []doiSnap {
	t.Helper()
	var out []doiSnap
	for i, f := range faults {
		if f.step != "" {
			arm(f)
		}
		snap := publishNow(t, inst, h)
		s := waitDOI(t, inst, h, snap.ID)
		if n := pending(); n != 0 {
			t.Fatalf("version %d (%s): %d faults did not fire", i+1, f, n)
		}
		if f.step == "" {
			if s.doiStatus() != "registered" {
				t.Fatalf("version %d: doi_status %q, error %+v", i+1, s.doiStatus(), s.DOIError)
			}
		} else {
			if s.doiStatus() != "failed" || s.DOIError == nil || s.DOIError.Code != doi.CodeUnavail || !s.DOIError.Retryable || s.DOI != nil {
				t.Fatalf("version %d (%s): want a retryable failure, got %q %+v", i+1, f, s.doiStatus(), s.DOIError)
			}
			s = retryDOI(t, inst, h, snap.ID)
			if s.doiStatus() != "registered" || s.DOIError != nil {
				t.Fatalf("version %d (%s): after retry doi_status %q, error %+v", i+1, f, s.doiStatus(), s.DOIError)
			}
		}
		if s.DOI == nil || *s.DOI == "" {
			t.Fatalf("version %d: registered without a DOI", i+1)
		}
		testenv.Scenario{Name: "again", Method: "POST", URL: fmt.Sprintf("/dig/api/publish/snapshots/%d/doi", snap.ID), Headers: h, ExpectedStatus: 409,
			ExpectedContent: []string{`"code":"doi_already_registered"`, *s.DOI}}.Run(t, inst.Server)
		out = append(out, s)
	}
	return out
}

func relations(attrs map[string]any) map[string][]string {
	out := map[string][]string{}
	list, _ := attrs["relatedIdentifiers"].([]any)
	for _, r := range list {
		m, _ := r.(map[string]any)
		rel, _ := m["relationType"].(string)
		id, _ := m["relatedIdentifier"].(string)
		out[rel] = append(out[rel], strings.ToLower(id))
	}
	return out
}

func TestPublishDOIDataCite(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		inst, _, h, writer := doiSetup(t, e)
		dc := doitest.NewDataCite(t, "10.5072", "TEST.STRATA", "dc-password")
		cfg := doiConfig(`{"provider":"datacite","base_url":"`+dc.URL+`","repository_id":"TEST.STRATA","prefix":"10.5072"}`, "dc-password")
		testenv.Scenario{Name: "settings", Method: "PUT", URL: "/dig/api/publish/config", Body: cfg, Headers: h, ExpectedStatus: 200,
			ExpectedContent: []string{`"doi_secret_set":true`}, NotExpectedContent: []string{"dc-password"}}.Run(t, inst.Server)

		// A failure after DataCite committed, at each step, then a retry.
		faults := []fault{
			{},                                   // v1: publish → findable
			{"create", doitest.DropAfterCommit},  // v2: the draft was created, the answer lost
			{"publish", doitest.DropAfterCommit}, // v3: findable, the answer lost
			{"update", doitest.DropAfterCommit},  // v4: v3 linked back, the answer lost
			// A dropped GET is replayed by Go's transport (it is
			// idempotent), so the read that fails is a 500.
			{"get", doitest.Fail500},
			{"publish", doitest.Fail500},
		}
		snaps := mintVersions(t, inst, h, faults, func(f fault) { dc.FailNext(f.step, f.mode) }, dc.Pending)

		held := dc.DOIs()
		if len(held) != len(snaps) {
			t.Fatalf("DataCite holds %d DOIs for %d snapshots: %+v", len(held), len(snaps), held)
		}
		byDOI := map[string]doitest.DOI{}
		for _, d := range held {
			byDOI[d.DOI] = d
		}
		for i, s := range snaps {
			want := "10.5072/" + doi.SuffixFor(fmt.Sprintf("dig/snapshot/%d", s.ID))
			if *s.DOI != want {
				t.Errorf("v%d: DOI %s, want %s (from the snapshot's key)", i+1, *s.DOI, want)
			}
			d, ok := byDOI[strings.ToLower(*s.DOI)]
			if !ok {
				t.Fatalf("v%d: DOI %s not at DataCite", i+1, *s.DOI)
			}
			if d.State != "findable" || d.Publishes != 1 {
				t.Errorf("v%d: state %s, published %d times", i+1, d.State, d.Publishes)
			}
			if u, _ := d.Attributes["url"].(string); !strings.HasPrefix(u, "http") || !strings.HasSuffix(u, fmt.Sprintf("/dig/data/snapshot/%d", *s.Version)) {
				t.Errorf("v%d: url %q is not the landing page", i+1, u)
			}
			raw, _ := json.Marshal(d.Attributes["titles"])
			if !strings.Contains(string(raw), "Excavations at Test Hill") {
				t.Errorf("v%d: titles %s", i+1, raw)
			}
			if v, _ := d.Attributes["version"].(string); v != fmt.Sprint(*s.Version) {
				t.Errorf("v%d: version %q", i+1, v)
			}
			rel := relations(d.Attributes)
			var wantNew, wantPrev []string
			if i > 0 {
				wantNew = []string{strings.ToLower(*snaps[i-1].DOI)}
			}
			if i+1 < len(snaps) {
				wantPrev = []string{strings.ToLower(*snaps[i+1].DOI)}
			}
			if fmt.Sprint(rel["IsNewVersionOf"]) != fmt.Sprint(wantNew) || fmt.Sprint(rel["IsPreviousVersionOf"]) != fmt.Sprint(wantPrev) {
				t.Errorf("v%d: IsNewVersionOf %v (want %v), IsPreviousVersionOf %v (want %v)", i+1,
					rel["IsNewVersionOf"], wantNew, rel["IsPreviousVersionOf"], wantPrev)
			}
		}

		t.Run("landing page cites the DOI", func(t *testing.T) {
			s := snaps[0]
			req := httptest.NewRequest("GET", fmt.Sprintf("/dig/data/snapshot/%d", *s.Version), nil)
			rec := httptest.NewRecorder()
			inst.Server.ServeHTTP(rec, req)
			body := rec.Body.String()
			link := "https://doi.org/" + *s.DOI
			if rec.Code != 200 || !strings.Contains(body, `href="`+link+`"`) {
				t.Fatalf("landing page %d lacks the DOI link %s", rec.Code, link)
			}
			// APA ends with the link (the DOI, not the landing page).
			if !strings.Contains(body, "[Data set]. Test University. "+link) {
				t.Errorf("APA citation does not cite %s", link)
			}
			req = httptest.NewRequest("GET", fmt.Sprintf("/dig/data/snapshot/%d", *s.Version), nil)
			req.Header.Set("Accept", "application/ld+json")
			rec = httptest.NewRecorder()
			inst.Server.ServeHTTP(rec, req)
			if !strings.Contains(rec.Body.String(), link) {
				t.Errorf("JSON-LD lacks %s: %s", link, rec.Body.String())
			}
		})

		t.Run("route", func(t *testing.T) {
			id := snaps[0].ID
			testenv.Scenario{Name: "writer", Method: "POST", URL: fmt.Sprintf("/dig/api/publish/snapshots/%d/doi", id), Headers: writer, ExpectedStatus: 403}.Run(t, inst.Server)
			testenv.Scenario{Name: "unknown", Method: "POST", URL: "/dig/api/publish/snapshots/999/doi", Headers: h, ExpectedStatus: 404,
				ExpectedContent: []string{`"code":"snapshot_not_found"`}}.Run(t, inst.Server)
			testenv.Scenario{Name: "not an id", Method: "POST", URL: "/dig/api/publish/snapshots/x%27/doi", Headers: h, ExpectedStatus: 404}.Run(t, inst.Server)
			testenv.Scenario{Name: "parameters", Method: "POST", URL: fmt.Sprintf("/dig/api/publish/snapshots/%d/doi", id), Body: `{"force":true}`, Headers: h,
				ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_body"`}}.Run(t, inst.Server)
		})
	})
}

func TestPublishDOIZenodo(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		inst, _, h, _ := doiSetup(t, e)
		z := doitest.NewZenodo(t, "zen-token")
		cfg := doiConfig(`{"provider":"zenodo","base_url":"`+z.URL+`"}`, "zen-token")
		testenv.Scenario{Name: "settings", Method: "PUT", URL: "/dig/api/publish/config", Body: cfg, Headers: h, ExpectedStatus: 200,
			ExpectedContent: []string{`"doi_secret_set":true`}, NotExpectedContent: []string{"zen-token"}}.Run(t, inst.Server)

		faults := []fault{
			{"create", doitest.DropAfterCommit},     // v1: the draft exists, its id unknown: found again by its marker
			{},                                      // v2: newversion, clean
			{"newversion", doitest.DropAfterCommit}, // v3
			{"delete-file", doitest.DropAfterCommit},
			{"upload", doitest.DropAfterCommit},
			{"metadata", doitest.DropAfterCommit},
			{"publish", doitest.DropAfterCommit},
		}
		snaps := mintVersions(t, inst, h, faults, func(f fault) { z.FailNext(f.step, f.mode) }, z.Pending)

		deps := z.Depositions()
		if len(deps) != len(snaps) {
			t.Fatalf("Zenodo holds %d depositions for %d snapshots (a stray draft?)", len(deps), len(snaps))
		}
		for i, s := range snaps {
			d := deps[i]
			if !d.Submitted || d.Publishes != 1 || d.DOI != *s.DOI {
				t.Errorf("v%d: deposition %d submitted %v, published %d times, DOI %s (snapshot %s)", i+1, d.ID, d.Submitted, d.Publishes, d.DOI, *s.DOI)
			}
			if i > 0 && (d.PreviousID != deps[i-1].ID || d.ConceptID != deps[0].ConceptID) {
				t.Errorf("v%d: deposition %d follows %d (concept %d), want %d (concept %d)", i+1, d.ID, d.PreviousID, d.ConceptID, deps[i-1].ID, deps[0].ConceptID)
			}
			if title, _ := d.Metadata["title"].(string); title != "Excavations at Test Hill" {
				t.Errorf("v%d: title %q", i+1, title)
			}
			// The crate, once, with the MD5 of what the API serves.
			zipBytes := downloadRaw(t, inst, h, s.ID)
			sum := md5.Sum(zipBytes)
			name := fmt.Sprintf("dig-v%d.zip", *s.Version)
			if len(d.Files) != 1 || d.Files[0].Name != name || d.Files[0].MD5 != hex.EncodeToString(sum[:]) || d.Files[0].Size != int64(len(zipBytes)) {
				t.Errorf("v%d: files %+v, want %s md5 %x (%d bytes)", i+1, d.Files, name, sum, len(zipBytes))
			}
		}
	})
}

// downloadRaw fetches a snapshot's zip.
func downloadRaw(t *testing.T, inst *testenv.Instance, h map[string]string, id int64) []byte {
	t.Helper()
	req := httptest.NewRequest("GET", fmt.Sprintf("/dig/api/publish/snapshots/%d/download", id), nil)
	for k, v := range h {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	inst.Server.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("download %d: %d", id, rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return b
}

func TestPublishDOICredential(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		inst, a, h, _ := doiSetup(t, e)
		const right, wrong = "right-secret-§-ü", "WRONG-secret-Zq9"
		dc := doitest.NewDataCite(t, "10.5072", "TEST.STRATA", right)
		g := newGate(t, dc.URL)
		doiJSON := `{"provider":"datacite","base_url":"` + g.URL + `","repository_id":"TEST.STRATA","prefix":"10.5072"}`

		// A snapshot made without a provider gets no DOI, and none can be asked.
		testenv.Scenario{Name: "no provider", Method: "PUT", URL: "/dig/api/publish/config", Body: pubConfig, Headers: h, ExpectedStatus: 200}.Run(t, inst.Server)
		plain := publishNow(t, inst, h)
		if s, _ := getSnap(t, inst, h, plain.ID); s.DOIStatus != nil {
			t.Fatalf("doi_status %q without a provider", s.doiStatus())
		}
		testenv.Scenario{Name: "not configured", Method: "POST", URL: fmt.Sprintf("/dig/api/publish/snapshots/%d/doi", plain.ID), Headers: h, ExpectedStatus: 409,
			ExpectedContent: []string{`"code":"doi_not_configured"`}}.Run(t, inst.Server)

		// A snapshot that is not done.
		if _, err := a.DB.Exec(t.Context(), `INSERT INTO `+a.DB.Sys("publish_snapshots")+` (id, status, config, created_at, error) VALUES (900, 'failed', ?, 0, 'x')`,
			`{"config":{"doi":{"provider":"datacite"}},"base_url":"http://x/dig"}`); err != nil {
			t.Fatal(err)
		}
		testenv.Scenario{Name: "not done", Method: "POST", URL: "/dig/api/publish/snapshots/900/doi", Headers: h, ExpectedStatus: 409,
			ExpectedContent: []string{`"code":"snapshot_not_done"`}}.Run(t, inst.Server)

		// The wrong credential: sealed at rest, never shown.
		testenv.Scenario{Name: "wrong secret", Method: "PUT", URL: "/dig/api/publish/config", Body: doiConfig(doiJSON, wrong), Headers: h, ExpectedStatus: 200,
			ExpectedContent: []string{`"doi_secret_set":true`}, NotExpectedContent: []string{wrong}}.Run(t, inst.Server)
		testenv.Scenario{Name: "read", URL: "/dig/api/publish/config", Headers: h, ExpectedStatus: 200,
			ExpectedContent: []string{`"doi_secret_set":true`, `"provider":"datacite"`}, NotExpectedContent: []string{wrong, "doi_secret\":\""}}.Run(t, inst.Server)
		var sealed sql.NullString
		if err := a.DB.QueryRow(t.Context(), `SELECT doi_secret FROM `+a.DB.Sys("publish")+` WHERE id = 1`).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if !sealed.Valid || sealed.String == "" || strings.Contains(sealed.String, wrong) || strings.Contains(sealed.String, "WRONG") {
			t.Fatalf("the stored credential is not sealed: %q", sealed.String)
		}

		snap := publishNow(t, inst, h)
		s := waitDOI(t, inst, h, snap.ID)
		if s.doiStatus() != "failed" || s.DOIError == nil || s.DOIError.Code != doi.CodeAuth || s.DOIError.Retryable {
			t.Fatalf("wrong credential: doi_status %q, error %+v", s.doiStatus(), s.DOIError)
		}
		_, body := getSnap(t, inst, h, snap.ID)
		if strings.Contains(body, wrong) {
			t.Fatalf("the snapshot shows the credential: %s", body)
		}
		// Nor does the job that failed.
		_, list := testenv.Do(t, inst.Server, "GET", "/dig/api/jobs", "", h)
		if raw, _ := json.Marshal(list); strings.Contains(string(raw), wrong) || !strings.Contains(string(raw), doi.CodeAuth) {
			t.Fatalf("jobs: %s", raw)
		}
		if n := len(dc.DOIs()); n != 0 {
			t.Fatalf("DataCite holds %d DOIs after refusing the credentials", n)
		}

		// No credential at all.
		testenv.Scenario{Name: "secret removed", Method: "PUT", URL: "/dig/api/publish/config", Body: doiConfig(doiJSON, ""), Headers: h, ExpectedStatus: 200,
			ExpectedContent: []string{`"doi_secret_set":false`}}.Run(t, inst.Server)
		s = retryDOI(t, inst, h, snap.ID)
		if s.doiStatus() != "failed" || s.DOIError == nil || s.DOIError.Code != "doi_secret_missing" {
			t.Fatalf("no credential: doi_status %q, error %+v", s.doiStatus(), s.DOIError)
		}

		// Fixed: the retry mints. Before it, the minting looks
		// interrupted (a node died while its job held it): the job it
		// names has ended, so a retry may take it over.
		testenv.Scenario{Name: "right secret", Method: "PUT", URL: "/dig/api/publish/config", Body: doiConfig(doiJSON, right), Headers: h, ExpectedStatus: 200,
			ExpectedContent: []string{`"doi_secret_set":true`}}.Run(t, inst.Server)
		if _, err := a.DB.Exec(t.Context(), `UPDATE `+a.DB.Sys("publish_snapshots")+` SET doi_status = 'minting' WHERE id = ?`, snap.ID); err != nil {
			t.Fatal(err)
		}
		g.close()
		job := startDOI(t, inst, h, snap.ID)
		<-g.entered // the job holds the minting, its first request held
		if s, _ := getSnap(t, inst, h, snap.ID); s.doiStatus() != "minting" {
			t.Fatalf("while minting: doi_status %q", s.doiStatus())
		}
		testenv.Scenario{Name: "one at a time", Method: "POST", URL: fmt.Sprintf("/dig/api/publish/snapshots/%d/doi", snap.ID), Headers: h, ExpectedStatus: 409,
			ExpectedContent: []string{`"code":"doi_minting"`}}.Run(t, inst.Server)
		g.open()
		waitJob(t, inst, h, job)
		s = waitDOI(t, inst, h, snap.ID)
		if s.doiStatus() != "registered" || s.DOI == nil {
			t.Fatalf("after fixing the credential: doi_status %q, error %+v", s.doiStatus(), s.DOIError)
		}
		if held := dc.DOIs(); len(held) != 1 || held[0].DOI != strings.ToLower(*s.DOI) || held[0].State != "findable" {
			t.Fatalf("DataCite holds %+v", held)
		}
		// The snapshot made before the provider was set is not a
		// previous version with a DOI: the first DOI starts a line (it
		// names the earlier version by its landing page only).
		for _, id := range relations(dc.DOIs()[0].Attributes)["IsNewVersionOf"] {
			if !strings.HasSuffix(id, "/dig/data/snapshot/1") {
				t.Errorf("first DOI is a new version of %v", id)
			}
		}
	})
}
