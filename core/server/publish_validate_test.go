package server_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/publish/crate"
	"github.com/strata-archaeo/strata/core/publish/publishtest"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestPublishValidates publishes the fixture of TestPublish on both
// engines and validates everything against the standards' own schemas,
// offline (publishtest): the RO-Crate descriptor and root, expanded with
// json-gold; every record as Linked Art; DataCite against its XSD; the data
// package against the Frictionless profile; every IIIF manifest and the
// tiles it implies; every OAI-PMH answer, payloads included, against the
// OAI-PMH XSD. Then the harvest: the union of ListRecords pages is exactly
// the published records, and after a change and a republication, from=
// brings exactly the changed record and the one that left the filter (as
// deleted).
func TestPublishValidates(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		// The clock is moved on between the two publications, so their
		// datestamps (seconds) differ.
		var offset atomic.Int64
		clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		inst := testenv.NewInstanceWithJobsDeps(t, e, server.Deps{Now: clock})
		a := testenv.NewApp(t, inst.Apps, "dig")
		f := newPubFix(t, a)
		testenv.NewUser(t, a, "pub@example.org", "pub@example.org", auth.Admin)
		h := testenv.Bearer(testenv.Login(t, inst.Server, "dig", "pub@example.org", testenv.Password))
		testenv.Scenario{Name: "settings", Method: "PUT", URL: "/dig/api/publish/config", Body: pubConfig, Headers: h, ExpectedStatus: 200}.Run(t, inst.Server)

		// More finds than one OAI-PMH page holds (100), so that harvesting
		// follows resumption tokens.
		us1 := publishedIDs(t, a, `SELECT "id" FROM `+a.DB.Qualify("units")+` WHERE "code" = 'US1'`)[0]
		for i := range 110 {
			f.insert("finds", map[string]any{"code": fmt.Sprintf("G%03d", i), "material": "flint ünï 🏺 <&>", "unit": us1, "count": i})
		}
		findID := func(code string) int64 {
			return publishedIDs(t, a, `SELECT "id" FROM `+a.DB.Qualify("finds")+` WHERE "code" = '`+code+`'`)[0]
		}
		// Photographs: two of F01, one of F03, one of a find never published.
		imaged := map[int64]int{findID("F01"): 2, findID("F03"): 1}
		hiddenFind := publishedIDs(t, a, `SELECT "id" FROM `+a.DB.Qualify("finds")+` WHERE "unit" NOT IN (SELECT u."id" FROM `+
			a.DB.Qualify("units")+` u JOIN `+a.DB.Qualify("trenches")+` t ON t."id" = u."trench" WHERE t."status" = 'finished')`)[0]
		for _, id := range []int64{findID("F01"), findID("F01"), findID("F03"), hiddenFind} {
			st, m := testenv.DoMultipart(t, inst.Server, fmt.Sprintf("/dig/api/record/finds/%d/file", id), h["Authorization"],
				map[string]string{"description": "photo"}, testenv.FormFile{Field: "file", Name: "photo.png", Data: testPNG(t, 700, 300)})
			if st != 200 {
				t.Fatalf("upload: %d %v", st, m)
			}
		}

		v1 := publishNow(t, inst, h)
		crate1 := downloadCrate(t, inst, h, v1.ID)
		published := publishedURIs(t, crate1)
		if len(published) != 1+4+12+110 {
			t.Fatalf("%d records published, want 127", len(published))
		}

		t.Run("crate", func(t *testing.T) { validateCrate(t, crate1, imaged) })

		base := oaiBase(t, inst)
		t.Run("oai-pmh", func(t *testing.T) {
			for _, q := range []string{"verb=Identify", "verb=ListSets", "verb=ListMetadataFormats",
				"verb=ListMetadataFormats&identifier=" + url.QueryEscape(base+published[0])} {
				oaiValid(t, inst, q, "")
			}
			for _, prefix := range []string{"oai_dc", "datacite"} {
				live, deleted := harvest(t, inst, "ListRecords", "metadataPrefix="+prefix)
				if !slices.Equal(live, published) || len(deleted) != 0 {
					t.Errorf("%s: harvested %d records (%d deleted), want the %d published", prefix, len(live), len(deleted), len(published))
				}
				one := oaiValid(t, inst, "verb=GetRecord&metadataPrefix="+prefix+"&identifier="+url.QueryEscape(base+published[3]), "")
				if !bytes.Contains(one, []byte("<metadata>")) {
					t.Errorf("GetRecord %s has no metadata:\n%s", prefix, one)
				}
			}
			finds, _ := harvest(t, inst, "ListRecords", "metadataPrefix=datacite&set=table:finds")
			if len(finds) != 12+110 {
				t.Errorf("set table:finds: %d records, want 122", len(finds))
			}
			ids, _ := harvest(t, inst, "ListIdentifiers", "metadataPrefix=oai_dc")
			if !slices.Equal(ids, published) {
				t.Errorf("ListIdentifiers: %d identifiers, want %d", len(ids), len(published))
			}
			for _, c := range []struct{ query, code string }{
				{"verb=Nope", "badVerb"},
				{"", "badVerb"},
				{"verb=Identify&verb=Identify", "badVerb"},
				{"verb=ListRecords", "badArgument"},
				{"verb=Identify&extra=1", "badArgument"},
				{"verb=ListRecords&metadataPrefix=oai_dc&from=yesterday", "badArgument"},
				{"verb=ListRecords&metadataPrefix=oai_dc&from=2024-01-01&until=2024-01-01T00:00:00Z", "badArgument"},
				{"verb=ListRecords&metadataPrefix=mods", "cannotDisseminateFormat"},
				{"verb=GetRecord&metadataPrefix=oai_dc&identifier=" + url.QueryEscape(base+"/dig/data/record/finds/999999"), "idDoesNotExist"},
				{"verb=GetRecord&metadataPrefix=oai_dc&identifier=" + url.QueryEscape(base+"/dig/data/record/staff/1"), "idDoesNotExist"},
				{"verb=GetRecord&metadataPrefix=oai_dc&identifier=%3Cscript%3E%26%C3%BC%F0%9F%8F%BA", "idDoesNotExist"},
				{"verb=ListMetadataFormats&identifier=urn:nothing", "idDoesNotExist"},
				{"verb=ListRecords&resumptionToken=forged", "badResumptionToken"},
				{"verb=ListRecords&resumptionToken=" + strings.Repeat("A", 1000), "badResumptionToken"},
				{"verb=ListRecords&metadataPrefix=oai_dc&from=2100-01-01", "noRecordsMatch"},
				{"verb=ListIdentifiers&metadataPrefix=oai_dc&set=table:staff", "noRecordsMatch"},
			} {
				oaiValid(t, inst, c.query, c.code)
			}
		})

		// A unit's description changes, a find leaves the filter (its unit
		// is now in an open trench), the rest is untouched; republished
		// later, from= brings exactly the two.
		changedUnit := publishedIDs(t, a, `SELECT "id" FROM `+a.DB.Qualify("units")+` WHERE "code" = 'US2'`)[0]
		if _, err := a.DB.Exec(t.Context(), `UPDATE `+a.DB.Qualify("units")+` SET "description" = ? WHERE "id" = ?`, "Rewritten ünï", changedUnit); err != nil {
			t.Fatal(err)
		}
		removed := findID("F02")
		var hiddenUnit int64
		if err := a.DB.QueryRow(t.Context(), `SELECT "unit" FROM `+a.DB.Qualify("finds")+` WHERE "id" = ?`, hiddenFind).Scan(&hiddenUnit); err != nil {
			t.Fatal(err)
		}
		if _, err := a.DB.Exec(t.Context(), `UPDATE `+a.DB.Qualify("finds")+` SET "unit" = ? WHERE "id" = ?`, hiddenUnit, removed); err != nil {
			t.Fatal(err)
		}
		offset.Store(int64(2 * time.Minute))
		v2 := publishNow(t, inst, h)
		crate2 := downloadCrate(t, inst, h, v2.ID)

		t.Run("republished", func(t *testing.T) {
			validateCrate(t, crate2, imaged)
			now := published
			published := publishedURIs(t, crate2)
			removedURI := fmt.Sprintf("/dig/data/record/finds/%d", removed)
			changedURI := fmt.Sprintf("/dig/data/record/units/%d", changedUnit)
			if !slices.Contains(now, removedURI) || !slices.Contains(now, changedURI) {
				t.Fatalf("%s or %s was not in the first publication", removedURI, changedURI)
			}
			if slices.Contains(published, removedURI) || len(published) != len(now)-1 {
				t.Fatalf("the find that left the filter is still published (%d records)", len(published))
			}
			live, deleted := harvest(t, inst, "ListRecords", "metadataPrefix=oai_dc")
			if !slices.Equal(live, published) || !slices.Equal(deleted, []string{removedURI}) {
				t.Errorf("harvested %d live, deleted %v; want %d, [%s]", len(live), deleted, len(published), removedURI)
			}
			// Datestamps: the first publication's for what did not change,
			// the second's for the changed and the deleted.
			stamps := datestamps(t, inst)
			t1, t2 := stamps[published[0]], stamps[changedURI]
			if !t2.After(t1) {
				t.Fatalf("the changed record's datestamp %v is not after %v", t2, t1)
			}
			if !stamps[removedURI].Equal(t2) {
				t.Errorf("the deletion's datestamp %v, want %v", stamps[removedURI], t2)
			}
			from := t1.Add(time.Second).Format(time.RFC3339)
			for _, verb := range []string{"ListRecords", "ListIdentifiers"} {
				l, d := harvest(t, inst, verb, "metadataPrefix=oai_dc&from="+from)
				if !slices.Equal(l, []string{changedURI}) || !slices.Equal(d, []string{removedURI}) {
					t.Errorf("%s from=%s: %v and deleted %v; want [%s] and [%s]", verb, from, l, d, changedURI, removedURI)
				}
				l, d = harvest(t, inst, verb, "metadataPrefix=oai_dc&until="+t1.Format(time.RFC3339))
				want := slices.DeleteFunc(slices.Clone(published), func(u string) bool { return u == changedURI })
				if !slices.Equal(l, want) || len(d) != 0 {
					t.Errorf("%s until=%s: %d records and deleted %v; want the %d unchanged", verb, t1.Format(time.RFC3339), len(l), d, len(want))
				}
				l, _ = harvest(t, inst, verb, "metadataPrefix=datacite&from="+t1.Format(time.DateOnly)+"&until="+t2.Add(24*time.Hour).Format(time.DateOnly))
				if !slices.Equal(l, published) {
					t.Errorf("%s by days: %d records, want %d", verb, len(l), len(published))
				}
			}
			gone := oaiValid(t, inst, "verb=GetRecord&metadataPrefix=datacite&identifier="+url.QueryEscape(base+removedURI), "")
			if !bytes.Contains(gone, []byte(`status="deleted"`)) || bytes.Contains(gone, []byte("<metadata")) {
				t.Errorf("GetRecord of the removed find:\n%s", gone)
			}
		})
	})
}

// validateCrate checks a downloaded crate against the schemas. imaged
// counts the photographs of each published find.
func validateCrate(t *testing.T, c fs.FS, imaged map[int64]int) {
	t.Helper()
	if err := crate.CheckCrate(c); err != nil {
		t.Errorf("CheckCrate: %v", err)
	}
	if err := crate.CheckPackage(c); err != nil {
		t.Errorf("CheckPackage: %v", err)
	}
	root, err := publishtest.ROCrate(fileOf(t, c, "ro-crate-metadata.json"))
	if err != nil {
		t.Errorf("RO-Crate 1.2: %v", err)
	}
	// What the issue asks of the root, beyond RO-Crate's musts.
	for _, iri := range []string{"http://schema.org/author", "http://schema.org/version", "http://schema.org/hasPart",
		"http://schema.org/publisher", "http://www.iana.org/assignments/relation/cite-as"} {
		if root[iri] == nil {
			t.Errorf("the root has no %s after expansion", iri)
		}
	}
	if err := publishtest.DataPackage(fileOf(t, c, "datapackage.json")); err != nil {
		t.Error(err)
	}
	err = publishtest.DataCiteXML(fileOf(t, c, "datacite.xml"))
	if errors.Is(err, publishtest.ErrNoXMLLint) {
		t.Log(err)
	} else if err != nil {
		t.Error(err)
	}

	// Every record: Linked Art, expanding with nothing dropped; one per
	// row of the tables.
	records := 0
	manifests := map[string][]byte{} // crate path → manifest
	var infos []string               // image service folders
	err = fs.WalkDir(c, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch {
		case strings.HasPrefix(p, "records/") && strings.HasSuffix(p, ".json"):
			records++
			doc := fileOf(t, c, p)
			if err := publishtest.LinkedArt(doc); err != nil {
				t.Errorf("%s: %v", p, err)
			}
			if _, err := publishtest.LinkedArtExpansion(doc); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		case path.Base(p) == "info.json":
			infos = append(infos, path.Dir(p))
		case strings.HasSuffix(p, ".json"):
			var m struct {
				Context any `json:"@context"`
			}
			doc := fileOf(t, c, p)
			if json.Unmarshal(doc, &m) == nil && m.Context == "http://iiif.io/api/presentation/3/context.json" {
				manifests[p] = doc
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, tb := range []string{"trenches", "units", "finds"} {
		rows += len(csvIDs(t, c, "data/"+tb+".csv"))
	}
	if records != rows {
		t.Errorf("%d records, %d rows in the tables", records, rows)
	}

	// IIIF: every manifest valid with every file it implies; every image
	// service shown by a manifest; each photographed find's document names
	// a manifest of the crate with its photographs.
	want := 0
	for _, n := range imaged {
		want += n
	}
	if want > 0 && len(manifests) == 0 {
		t.Fatalf("%d photographs of published finds and no IIIF manifest", want)
	}
	canvases := 0
	byID := map[string][]byte{}
	for p, m := range manifests {
		if err := publishtest.IIIFManifest(m, c); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		var doc struct {
			ID    string `json:"id"`
			Items []any  `json:"items"`
		}
		json.Unmarshal(m, &doc)
		canvases += len(doc.Items)
		if !strings.HasSuffix(doc.ID, "/"+p) {
			t.Errorf("manifest %s has the id %s, not its path", p, doc.ID)
		}
		byID[doc.ID] = m
	}
	if canvases != want || len(infos) != want {
		t.Errorf("%d canvases and %d image services for %d photographs", canvases, len(infos), want)
	}
	for _, dir := range infos {
		shown := false
		for _, m := range manifests {
			shown = shown || bytes.Contains(m, []byte(`/`+dir+`"`))
		}
		if !shown {
			t.Errorf("image service %s is in no manifest", dir)
		}
	}
	for id, n := range imaged {
		rec := fileOf(t, c, fmt.Sprintf("records/finds/%d.json", id))
		named := 0
		for mid, m := range byID {
			if bytes.Contains(rec, []byte(`"`+mid+`"`)) {
				named++
				var doc struct {
					Items []any `json:"items"`
				}
				json.Unmarshal(m, &doc)
				if len(doc.Items) != n {
					t.Errorf("find %d: manifest %s shows %d photographs, want %d", id, mid, len(doc.Items), n)
				}
			}
		}
		if named != 1 {
			t.Errorf("find %d's document names %d manifests of the crate, want 1", id, named)
		}
	}
}

// publishedURIs lists the URIs of the records a crate's tables hold,
// sorted.
func publishedURIs(t *testing.T, c fs.FS) []string {
	t.Helper()
	var out []string
	for _, tb := range []string{"trenches", "units", "finds"} {
		for _, id := range csvIDs(t, c, "data/"+tb+".csv") {
			out = append(out, fmt.Sprintf("/dig/data/record/%s/%d", tb, id))
		}
	}
	sort.Strings(out)
	return out
}

// oaiBase is the scheme and host of the OAI-PMH identifiers, read from
// Identify's baseURL (…/dig/oai).
func oaiBase(t *testing.T, inst *testenv.Instance) string {
	t.Helper()
	var id struct {
		BaseURL string `xml:"Identify>baseURL"`
	}
	if err := xml.Unmarshal(oaiValid(t, inst, "verb=Identify", ""), &id); err != nil {
		t.Fatal(err)
	}
	base, ok := strings.CutSuffix(id.BaseURL, "/dig/oai")
	if !ok {
		t.Fatalf("baseURL %q", id.BaseURL)
	}
	return base
}

// oaiValid asks the OAI-PMH endpoint, validates the answer against the
// XSD, and checks that it is the error code (or no error when code is "").
func oaiValid(t *testing.T, inst *testenv.Instance, query, code string) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	inst.Server.ServeHTTP(rec, httptest.NewRequest("GET", "/dig/oai?"+query, nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/xml") {
		t.Fatalf("oai %s: %d %s %s", query, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	body := rec.Body.Bytes()
	if err := publishtest.OAIPMH(body); errors.Is(err, publishtest.ErrNoXMLLint) {
		t.Log(err)
	} else if err != nil {
		t.Errorf("oai %s: %v\n%.3000s", query, err, body)
	}
	var resp struct {
		Errors []struct {
			Code string `xml:"code,attr"`
		} `xml:"error"`
	}
	if err := xml.Unmarshal(body, &resp); err != nil {
		t.Fatalf("oai %s: %v", query, err)
	}
	var codes []string
	for _, e := range resp.Errors {
		codes = append(codes, e.Code)
	}
	if code == "" && len(codes) > 0 || code != "" && !slices.Contains(codes, code) {
		t.Errorf("oai %s: errors %v, want %q:\n%s", query, codes, code, body)
	}
	return body
}

type oaiHeader struct {
	Status     string `xml:"status,attr"`
	Identifier string `xml:"identifier"`
	Datestamp  string `xml:"datestamp"`
}

// oaiPage is a ListRecords or ListIdentifiers answer.
type oaiPage struct {
	Records []struct {
		Header   oaiHeader `xml:"header"`
		Metadata *struct {
			Inner string `xml:",innerxml"`
		} `xml:"metadata"`
	} `xml:"ListRecords>record"`
	RecordsToken string      `xml:"ListRecords>resumptionToken"`
	Headers      []oaiHeader `xml:"ListIdentifiers>header"`
	HeadersToken string      `xml:"ListIdentifiers>resumptionToken"`
}

// harvest runs a list verb over every page, following resumption tokens,
// each page validated, and returns the paths of the live and of the
// deleted identifiers, sorted. An identifier twice is an error.
func harvest(t *testing.T, inst *testenv.Instance, verb, args string) (live, deleted []string) {
	t.Helper()
	seen := map[string]bool{}
	pages := 0
	for q := "verb=" + verb + "&" + args; ; pages++ {
		if pages > 100 {
			t.Fatalf("%s: more than 100 pages", args)
		}
		body := oaiValid(t, inst, q, "")
		var p oaiPage
		if err := xml.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		headers, token := p.Headers, p.HeadersToken
		if verb == "ListRecords" {
			headers, token = nil, p.RecordsToken
			for _, r := range p.Records {
				headers = append(headers, r.Header)
				if (r.Metadata != nil) == (r.Header.Status == "deleted") {
					t.Errorf("%s: %s (status %q) with metadata %v", q, r.Header.Identifier, r.Header.Status, r.Metadata != nil)
				}
			}
		}
		for _, h := range headers {
			u, err := url.Parse(h.Identifier)
			if err != nil || !u.IsAbs() {
				t.Fatalf("identifier %q: %v", h.Identifier, err)
			}
			if seen[u.Path] {
				t.Errorf("%s: %s harvested twice", args, u.Path)
			}
			seen[u.Path] = true
			if h.Status == "deleted" {
				deleted = append(deleted, u.Path)
			} else {
				live = append(live, u.Path)
			}
		}
		if token == "" {
			break
		}
		q = "verb=" + verb + "&resumptionToken=" + url.QueryEscape(token)
	}
	if len(seen) > 100 && pages == 0 {
		t.Errorf("%s: %d items on one page", args, len(seen))
	}
	sort.Strings(live)
	sort.Strings(deleted)
	return live, deleted
}

// datestamps maps every item's path to its datestamp.
func datestamps(t *testing.T, inst *testenv.Instance) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	for q := "verb=ListIdentifiers&metadataPrefix=oai_dc"; ; {
		var p oaiPage
		if err := xml.Unmarshal(oaiValid(t, inst, q, ""), &p); err != nil {
			t.Fatal(err)
		}
		for _, h := range p.Headers {
			u, _ := url.Parse(h.Identifier)
			ds, err := time.Parse(time.RFC3339, h.Datestamp)
			if err != nil {
				t.Fatalf("datestamp %q: %v", h.Datestamp, err)
			}
			out[u.Path] = ds
		}
		if p.HeadersToken == "" {
			return out
		}
		q = "verb=ListIdentifiers&resumptionToken=" + url.QueryEscape(p.HeadersToken)
	}
}
