package doi_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/publish/datacite"
	"github.com/strata-archaeo/strata/core/publish/doi"
	"github.com/strata-archaeo/strata/core/publish/doi/doitest"
)

const (
	prefix = "10.5072"
	user   = "STRATA.TEST"
	pass   = "s3cret-password"
	token  = "zenodo-token-XYZ"
)

func meta(version string) datacite.Metadata {
	return datacite.Metadata{
		URL:             "https://strata.example/demo/publish/snapshots/" + version,
		Titles:          []string{"Poggio Rosso excavation data & <finds>"},
		Descriptions:    []string{"Units, finds\nand samples."},
		Creators:        []datacite.Creator{{Name: "Carberry, Josiah", GivenName: "Josiah", FamilyName: "Carberry", ORCID: "0000-0002-1825-0097"}},
		Publisher:       "Strata demo",
		PublicationYear: 2026,
		Version:         version,
		Rights:          []datacite.Rights{{Identifier: "CC-BY-4.0", URI: "https://creativecommons.org/licenses/by/4.0/"}},
		Subjects:        []datacite.Subject{{Term: "stratigraphic units", Scheme: "AAT", ValueURI: "http://vocab.getty.edu/aat/300379985"}},
		Dates:           []datacite.Date{{Type: "Issued", Value: "2026-03-0" + version}},
	}
}

// files are the snapshot's files; each version's zip has its own name, so a
// new version must drop the previous version's zip from its draft.
func files(version, content string) []doi.File {
	return []doi.File{
		{Name: "crate-v" + version + ".zip", Size: int64(len(content)), Open: func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(content)), nil
		}},
		{Name: "datacite.xml", Size: 5, Open: func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader("<x/>\n")), nil
		}},
	}
}

func request(key, version string, prev *doi.State) doi.Request {
	return doi.Request{Key: key, Metadata: meta(version), Files: files(version, "zip bytes of "+key), Previous: prev}
}

// store is the caller's persistence: it keeps the JSON of the last saved
// State, as a job would in its database row.
type store struct {
	saved  []byte
	saves  int
	failAt int // the failAt-th save fails (simulated crash), 0: never
}

func (s *store) save(st doi.State) error {
	s.saves++
	if s.saves == s.failAt {
		return fmt.Errorf("simulated crash at save %d", s.saves)
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	s.saved = b
	return nil
}

func (s *store) state(t *testing.T) doi.State {
	t.Helper()
	var st doi.State
	if s.saved != nil {
		if err := json.Unmarshal(s.saved, &st); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// mintUntilDone retries from the saved state, as the job runner would,
// until Mint succeeds; it returns the result and how many attempts failed.
func mintUntilDone(t *testing.T, p doi.Provider, req doi.Request, s *store) (doi.Result, int) {
	t.Helper()
	failures := 0
	for attempt := 0; attempt < 6; attempt++ {
		res, err := p.Mint(context.Background(), req, s.state(t), s.save)
		if err == nil {
			if st := s.state(t); st.Step != "done" || st.DOI != res.DOI {
				t.Fatalf("saved state %+v does not record the result %+v", st, res)
			}
			return res, failures
		}
		failures++
		if strings.Contains(err.Error(), pass) || strings.Contains(err.Error(), token) {
			t.Fatalf("error leaks a credential: %v", err)
		}
	}
	t.Fatal("Mint did not succeed in 6 attempts")
	return doi.Result{}, failures
}

func newDataCite(t *testing.T) (*doitest.DataCite, doi.Provider) {
	srv := doitest.NewDataCite(t, prefix, user, pass)
	return srv, doi.NewDataCite(srv.URL, user, pass, prefix, &http.Client{Timeout: 30 * time.Second})
}

func newZenodo(t *testing.T) (*doitest.Zenodo, doi.Provider) {
	srv := doitest.NewZenodo(t, token)
	return srv, doi.NewZenodo(srv.URL, token, &http.Client{Timeout: 30 * time.Second})
}

func TestDataCiteCleanMint(t *testing.T) {
	srv, p := newDataCite(t)
	var s store
	res, fails := mintUntilDone(t, p, request("app1/snap1", "1", nil), &s)
	if fails != 0 {
		t.Fatalf("%d failures on a clean mint", fails)
	}
	want := prefix + "/" + doi.SuffixFor("app1/snap1")
	if res.DOI != want || res.URL != "https://doi.org/"+want {
		t.Fatalf("result %+v, want DOI %s", res, want)
	}
	dois := srv.DOIs()
	if len(dois) != 1 || dois[0].DOI != want || dois[0].State != "findable" || dois[0].Publishes != 1 {
		t.Fatalf("server holds %+v", dois)
	}
	a := dois[0].Attributes
	if a["url"] != meta("1").URL || a["publisher"] != "Strata demo" {
		t.Errorf("attributes %v", a)
	}
	// A finished state returns without touching the server.
	before := dois[0].Writes
	res2, err := p.Mint(context.Background(), request("app1/snap1", "1", nil), s.state(t), s.save)
	if err != nil || res2 != res || srv.DOIs()[0].Writes != before {
		t.Fatalf("re-mint of a done state: %+v %v", res2, err)
	}
}

func TestDataCiteNewVersion(t *testing.T) {
	srv, p := newDataCite(t)
	var s1, s2 store
	r1, _ := mintUntilDone(t, p, request("app1/snap1", "1", nil), &s1)
	prev := s1.state(t)
	r2, fails := mintUntilDone(t, p, request("app1/snap2", "2", &prev), &s2)
	if fails != 0 || r1.DOI == r2.DOI {
		t.Fatalf("fails %d, DOIs %s %s", fails, r1.DOI, r2.DOI)
	}
	checkDataCiteVersions(t, srv, r1.DOI, r2.DOI)
}

func checkDataCiteVersions(t *testing.T, srv *doitest.DataCite, old, new string) {
	t.Helper()
	dois := srv.DOIs()
	if len(dois) != 2 {
		t.Fatalf("want 2 DOIs, got %+v", dois)
	}
	byID := map[string]doitest.DOI{}
	for _, d := range dois {
		byID[d.DOI] = d
		if d.State != "findable" || d.Publishes != 1 {
			t.Errorf("%s: state %s, publishes %d", d.DOI, d.State, d.Publishes)
		}
	}
	has := func(d doitest.DOI, rel, id string) bool {
		n := 0
		list, _ := d.Attributes["relatedIdentifiers"].([]any)
		for _, x := range list {
			m := x.(map[string]any)
			if m["relationType"] == rel && m["relatedIdentifier"] == id && m["relatedIdentifierType"] == "DOI" {
				n++
			}
		}
		return n == 1
	}
	if !has(byID[new], "IsNewVersionOf", old) {
		t.Errorf("new version lacks IsNewVersionOf %s: %v", old, byID[new].Attributes["relatedIdentifiers"])
	}
	if !has(byID[old], "IsPreviousVersionOf", new) {
		t.Errorf("old version lacks exactly one IsPreviousVersionOf %s: %v", new, byID[old].Attributes["relatedIdentifiers"])
	}
	if byID[old].Attributes["titles"] == nil {
		t.Error("linking the old version lost its titles")
	}
}

func TestDataCiteFaultsEveryStep(t *testing.T) {
	for _, step := range []string{"create", "get", "publish", "update"} {
		for _, mode := range []doitest.Mode{doitest.Fail500, doitest.DropAfterCommit} {
			t.Run(fmt.Sprintf("%s/%d", step, mode), func(t *testing.T) {
				srv, p := newDataCite(t)
				var s1, s2 store
				r1, _ := mintUntilDone(t, p, request("app/1", "1", nil), &s1)
				prev := s1.state(t)
				srv.FailNext(step, mode)
				r2, fails := mintUntilDone(t, p, request("app/2", "2", &prev), &s2)
				if srv.Pending() != 0 {
					t.Fatal("the fault never fired")
				}
				// A dropped GET may be replayed by net/http itself.
				if fails == 0 && !(step == "get" && mode == doitest.DropAfterCommit) {
					t.Error("the fault did not surface as an error")
				}
				checkDataCiteVersions(t, srv, r1.DOI, r2.DOI)
			})
		}
	}
}

// TestDataCiteCrashAfterEverySave makes the caller's save fail (a crash
// after the remote commit, before the state is kept) at each save in turn.
func TestDataCiteCrashAfterEverySave(t *testing.T) {
	for n := 1; n <= 3; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			srv, p := newDataCite(t)
			var s1 store
			r1, _ := mintUntilDone(t, p, request("app/1", "1", nil), &s1)
			prev := s1.state(t)
			s2 := store{failAt: n}
			r2, fails := mintUntilDone(t, p, request("app/2", "2", &prev), &s2)
			if fails != 1 {
				t.Errorf("%d failures, want 1", fails)
			}
			checkDataCiteVersions(t, srv, r1.DOI, r2.DOI)
		})
	}
}

func TestDataCiteWrongCredentials(t *testing.T) {
	srv := doitest.NewDataCite(t, prefix, user, pass)
	p := doi.NewDataCite(srv.URL, user, "wrong-"+pass, prefix, nil)
	var s store
	_, err := p.Mint(context.Background(), request("k", "1", nil), doi.State{}, s.save)
	if errs.CodeOf(err) != doi.CodeAuth || doi.Retryable(err) {
		t.Fatalf("err = %v, want %s", err, doi.CodeAuth)
	}
	if strings.Contains(err.Error(), pass) {
		t.Fatal("error leaks the password")
	}
	if len(srv.DOIs()) != 0 {
		t.Fatal("a DOI was created with wrong credentials")
	}
}

func TestDataCiteOtherPrefixRejected(t *testing.T) {
	srv := doitest.NewDataCite(t, prefix, user, pass)
	p := doi.NewDataCite(srv.URL, user, pass, "10.9999", nil)
	_, err := p.Mint(context.Background(), request("k", "1", nil), doi.State{}, (&store{}).save)
	if errs.CodeOf(err) != doi.CodeAuth {
		t.Fatalf("err = %v, want %s", err, doi.CodeAuth)
	}
}

func TestDataCite5xxRetryable(t *testing.T) {
	srv, p := newDataCite(t)
	srv.FailNext("create", doitest.Fail500)
	var s store
	_, err := p.Mint(context.Background(), request("k", "1", nil), doi.State{}, s.save)
	if errs.CodeOf(err) != doi.CodeUnavail || !doi.Retryable(err) {
		t.Fatalf("err = %v, want retryable %s", err, doi.CodeUnavail)
	}
	srv.FailNext("publish", doitest.DropAfterCommit)
	_, err = p.Mint(context.Background(), request("k", "1", nil), s.state(t), s.save)
	if !doi.Retryable(err) {
		t.Fatalf("dropped connection: err = %v, want retryable", err)
	}
}

func TestStateMismatch(t *testing.T) {
	_, p := newDataCite(t)
	for name, st := range map[string]doi.State{
		"provider": {Provider: "zenodo", Step: "created"},
		"key":      {Provider: "datacite", Key: "other", Step: "drafted"},
	} {
		_, err := p.Mint(context.Background(), request("k", "1", nil), st, (&store{}).save)
		if errs.CodeOf(err) != doi.CodeMismatch {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestInvalidMetadataRefusedBeforeAnyRequest(t *testing.T) {
	dc, p := newDataCite(t)
	z, pz := newZenodo(t)
	req := request("k", "1", nil)
	req.Metadata.Titles = []string{"bad \x00 title"}
	for _, pr := range []doi.Provider{p, pz} {
		_, err := pr.Mint(context.Background(), req, doi.State{}, (&store{}).save)
		if errs.CodeOf(err) != doi.CodeInvalid {
			t.Errorf("%s: err = %v", pr.Name(), err)
		}
	}
	if len(dc.DOIs()) != 0 || len(z.Depositions()) != 0 {
		t.Fatal("a request reached the server")
	}
}

func TestSuffixStable(t *testing.T) {
	a, b := doi.SuffixFor("app/1"), doi.SuffixFor("app/1")
	if a != b || a == doi.SuffixFor("app/2") || !strings.HasPrefix(a, "strata-") || strings.Contains(a, "app") {
		t.Fatalf("suffixes %q %q", a, doi.SuffixFor("app/2"))
	}
}

// --- Zenodo ---

func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// checkZenodo checks the depositions: one published per key, in order,
// each new version linked to the previous, with exactly the request's files.
func checkZenodo(t *testing.T, srv *doitest.Zenodo, keys ...string) []doitest.Deposition {
	t.Helper()
	deps := srv.Depositions()
	if len(deps) != len(keys) {
		t.Fatalf("want %d depositions, got %d: %+v", len(keys), len(deps), deps)
	}
	for i, d := range deps {
		if !d.Submitted || d.Publishes != 1 || d.DOI == "" {
			t.Errorf("deposition %d: submitted %v publishes %d doi %q", d.ID, d.Submitted, d.Publishes, d.DOI)
		}
		if notes, _ := d.Metadata["notes"].(string); !strings.Contains(notes, doi.Marker(keys[i])) {
			t.Errorf("deposition %d notes %q lack the marker of %s", d.ID, notes, keys[i])
		}
		if d.Metadata["upload_type"] != "dataset" || d.Metadata["license"] != "cc-by-4.0" {
			t.Errorf("metadata %v", d.Metadata)
		}
		want := map[string]string{fmt.Sprintf("crate-v%d.zip", i+1): md5hex("zip bytes of " + keys[i]), "datacite.xml": md5hex("<x/>\n")}
		if len(d.Files) != len(want) {
			t.Errorf("deposition %d files %+v", d.ID, d.Files)
		}
		for _, f := range d.Files {
			if want[f.Name] != f.MD5 {
				t.Errorf("deposition %d file %s md5 %s, want %s", d.ID, f.Name, f.MD5, want[f.Name])
			}
		}
		if i > 0 && (d.PreviousID != deps[i-1].ID || d.ConceptID != deps[0].ConceptID) {
			t.Errorf("deposition %d is not a new version of %d", d.ID, deps[i-1].ID)
		}
	}
	return deps
}

func TestZenodoCleanMint(t *testing.T) {
	srv, p := newZenodo(t)
	var s store
	res, fails := mintUntilDone(t, p, request("app/1", "1", nil), &s)
	deps := checkZenodo(t, srv, "app/1")
	if fails != 0 || res.DOI != deps[0].DOI || res.URL != "https://doi.org/"+deps[0].DOI {
		t.Fatalf("fails %d result %+v", fails, res)
	}
	if st := s.state(t); st.DepositionID != deps[0].ID || st.Provider != "zenodo" {
		t.Fatalf("state %+v", st)
	}
	if desc, _ := deps[0].Metadata["description"].(string); !strings.Contains(desc, "Units, finds<br>and samples.") {
		t.Errorf("description %q", desc)
	}
}

func TestZenodoNewVersion(t *testing.T) {
	srv, p := newZenodo(t)
	var s1, s2 store
	mintUntilDone(t, p, request("app/1", "1", nil), &s1)
	prev := s1.state(t)
	r2, _ := mintUntilDone(t, p, request("app/2", "2", &prev), &s2)
	deps := checkZenodo(t, srv, "app/1", "app/2")
	if r2.DOI != deps[1].DOI || deps[1].Metadata["version"] != "2" {
		t.Fatalf("result %+v, deposition %+v", r2, deps[1])
	}
}

func TestZenodoFaultsEveryStep(t *testing.T) {
	steps := []struct {
		step       string
		newVersion bool
	}{
		{"create", false}, {"list", false}, {"get", false}, {"upload", false}, {"metadata", false}, {"publish", false},
		{"newversion", true}, {"get", true}, {"delete-file", true}, {"upload", true}, {"metadata", true}, {"publish", true},
	}
	for _, c := range steps {
		for _, mode := range []doitest.Mode{doitest.Fail500, doitest.DropAfterCommit} {
			t.Run(fmt.Sprintf("%s/newversion=%v/%d", c.step, c.newVersion, mode), func(t *testing.T) {
				srv, p := newZenodo(t)
				var s1, s2 store
				keys := []string{"app/1"}
				if !c.newVersion {
					srv.FailNext(c.step, mode)
					if c.step == "list" {
						// list only runs on resume after a lost create.
						srv.FailNext("create", doitest.DropAfterCommit)
					}
				}
				_, fails := mintUntilDone(t, p, request("app/1", "1", nil), &s1)
				if c.newVersion {
					prev := s1.state(t)
					srv.FailNext(c.step, mode)
					_, fails = mintUntilDone(t, p, request("app/2", "2", &prev), &s2)
					keys = append(keys, "app/2")
				}
				if srv.Pending() != 0 {
					t.Fatal("the fault never fired")
				}
				if fails == 0 && !(c.step == "get" || c.step == "list") {
					t.Error("the fault did not surface as an error")
				}
				checkZenodo(t, srv, keys...)
			})
		}
	}
}

func TestZenodoCrashAfterEverySave(t *testing.T) {
	// First version: creating, created, 2 uploads, uploaded, publishing,
	// done = 7 saves; a new version the same.
	for _, nv := range []bool{false, true} {
		for n := 1; n <= 7; n++ {
			t.Run(fmt.Sprintf("newversion=%v/%d", nv, n), func(t *testing.T) {
				srv, p := newZenodo(t)
				s1 := store{}
				keys := []string{"app/1"}
				if !nv {
					s1.failAt = n
				}
				mintUntilDone(t, p, request("app/1", "1", nil), &s1)
				if nv {
					prev := s1.state(t)
					s2 := store{failAt: n}
					mintUntilDone(t, p, request("app/2", "2", &prev), &s2)
					keys = append(keys, "app/2")
				}
				checkZenodo(t, srv, keys...)
			})
		}
	}
}

func TestZenodoWrongToken(t *testing.T) {
	srv := doitest.NewZenodo(t, token)
	p := doi.NewZenodo(srv.URL, "wrong-"+token, nil)
	_, err := p.Mint(context.Background(), request("k", "1", nil), doi.State{}, (&store{}).save)
	if errs.CodeOf(err) != doi.CodeAuth || strings.Contains(err.Error(), token) {
		t.Fatalf("err = %v", err)
	}
	if len(srv.Depositions()) != 0 {
		t.Fatal("deposition created with a wrong token")
	}
}

func TestZenodo5xxRetryable(t *testing.T) {
	srv, p := newZenodo(t)
	srv.FailNext("upload", doitest.Fail500)
	var s store
	_, err := p.Mint(context.Background(), request("k", "1", nil), doi.State{}, s.save)
	if !doi.Retryable(err) || errs.CodeOf(err) != doi.CodeUnavail {
		t.Fatalf("err = %v", err)
	}
}

func TestZenodoRejectsWithRemoteMessage(t *testing.T) {
	_, p := newZenodo(t)
	// A previous "version" that was never published cannot get a new one.
	prev := doi.State{Provider: "zenodo", DepositionID: 424242}
	_, err := p.Mint(context.Background(), request("k2", "2", &prev), doi.State{}, (&store{}).save)
	e, ok := errs.As(err)
	if !ok || e.Code != doi.CodeRejected || doi.Retryable(err) || e.Extra["remote"] != "Deposition not found" {
		t.Fatalf("err = %v (%+v)", err, e)
	}
}

func TestZenodoFileSizeMismatchRefused(t *testing.T) {
	srv, p := newZenodo(t)
	req := request("k", "1", nil)
	content := "longer than declared"
	req.Files = []doi.File{{Name: "crate-v1.zip", Size: 3, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader([]byte(content))), nil
	}}}
	if _, err := p.Mint(context.Background(), req, doi.State{}, (&store{}).save); err == nil {
		t.Fatal("a file longer than its declared size was accepted")
	}
	for _, d := range srv.Depositions() {
		if d.Submitted {
			t.Fatal("published despite the bad file")
		}
	}
}
