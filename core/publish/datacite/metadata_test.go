package datacite

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/publish/publishtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func minimal() Metadata {
	return Metadata{
		URL:             "https://strata.example/demo/publish/snapshots/1",
		Titles:          []string{"Excavations at Poggio Rosso"},
		Creators:        []Creator{{Name: "Rossi, Anna"}},
		Publisher:       "Strata demo",
		PublicationYear: 2026,
	}
}

func full() Metadata {
	return Metadata{
		DOI:          "10.5072/strata-abcd-1234",
		URL:          "https://strata.example/demo/publish/snapshots/2",
		Titles:       []string{"Excavations at Poggio Rosso, 2019–2025", "Scavi a Poggio Rosso"},
		Descriptions: []string{"Stratigraphic units, finds and samples.\nSecond paragraph."},
		Creators: []Creator{
			{Name: "Carberry, Josiah", GivenName: "Josiah", FamilyName: "Carberry", ORCID: "0000-0002-1825-0097", Affiliation: "Brown University"},
			{Name: "Rossi, Anna", GivenName: "Anna", FamilyName: "Rossi", ORCID: "https://orcid.org/0000-0001-5109-3700"},
			{Name: "Soprintendenza ABAP"},
		},
		Publisher:       "Strata demo",
		PublicationYear: 2026,
		ResourceType:    "Excavation database",
		Subjects: []Subject{
			{Term: "stratigraphic units", Scheme: "AAT", SchemeURI: "http://vocab.getty.edu/aat/", ValueURI: "http://vocab.getty.edu/aat/300379985"},
			{Term: "archaeology"},
		},
		Rights:   []Rights{{URI: "https://creativecommons.org/licenses/by/4.0/", Identifier: "CC-BY-4.0", Name: "Creative Commons Attribution 4.0 International"}},
		Version:  "2",
		Language: "en",
		Dates: []Date{
			{Type: "Issued", Value: "2026-03-01"},
			{Type: "Updated", Value: "2026-03-01T10:20:30Z"},
		},
		RelatedIdentifiers: []Related{
			{Identifier: "10.5072/strata-prev-0001", Type: "DOI", Relation: "IsNewVersionOf"},
			{Identifier: "https://strata.example/demo/publish/snapshots/2/download", Type: "URL", Relation: "HasPart"},
		},
		Formats:      []string{"application/zip", "text/csv"},
		Sizes:        []string{"12 MB", "3402 records"},
		GeoLocations: []GeoBox{{West: 11.25, East: 11.5, South: 43.1, North: 43.3}, {West: -180, East: 180, South: -90, North: 90}},
	}
}

func hostile() Metadata {
	m := full()
	m.Titles = []string{`A & B <c> ]]> "quoted" 'single' &amp; <![CDATA[x]]>`, "tab\tand CR\r\nline"}
	m.Descriptions = []string{"<script>alert(1)</script> \u202e RTL override, e\u0301 combining, 𓀀 astral, \u00a0nbsp, \u0085 NEL"}
	m.Creators[0].Affiliation = `"Quote" & <Co>`
	m.Subjects[0].Term = "]]>"
	m.Subjects[0].ValueURI = "http://vocab.getty.edu/aat/300379985?a=1&b=\"2\""
	m.Publisher = "Pub\tlisher\r\n&"
	m.Rights[0].Name = "x\ny\tz\r"
	return m
}

func TestXMLValidAgainstXSD(t *testing.T) {
	cases := []struct {
		name string
		m    Metadata
	}{
		{"minimal", minimal()},
		{"full", full()},
		{"hostile", hostile()},
		{"huge", func() Metadata {
			m := minimal()
			m.Descriptions = []string{strings.Repeat("lorem & ipsum <dolor> ", 50000)}
			return m
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.m.XML()
			if err != nil {
				t.Fatal(err)
			}
			again, _ := c.m.XML()
			if !bytes.Equal(out, again) {
				t.Fatal("XML is not deterministic")
			}
			xmllint(t, out)
			roundTrip(t, c.m, out)
		})
	}
}

// roundTrip parses the XML back and checks every text survived exactly.
func roundTrip(t *testing.T, m Metadata, out []byte) {
	t.Helper()
	var doc struct {
		Identifier struct {
			Type  string `xml:"identifierType,attr"`
			Value string `xml:",chardata"`
		} `xml:"identifier"`
		Titles       []string `xml:"titles>title"`
		Descriptions []string `xml:"descriptions>description"`
		Publisher    string   `xml:"publisher"`
		Creators     []struct {
			Name        string `xml:"creatorName"`
			ORCID       string `xml:"nameIdentifier"`
			Affiliation string `xml:"affiliation"`
		} `xml:"creators>creator"`
		Subjects []struct {
			Term     string `xml:",chardata"`
			ValueURI string `xml:"valueURI,attr"`
		} `xml:"subjects>subject"`
		Rights []string `xml:"rightsList>rights"`
	}
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("parse back: %v", err)
	}
	wantID, wantType := m.DOI, "DOI"
	if m.DOI == "" {
		wantID, wantType = m.URL, "URL"
	}
	if doc.Identifier.Value != wantID || doc.Identifier.Type != wantType {
		t.Errorf("identifier = %q (%s), want %q (%s)", doc.Identifier.Value, doc.Identifier.Type, wantID, wantType)
	}
	eq := func(what string, got, want []string) {
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("%s = %q, want %q", what, got, want)
		}
	}
	eq("titles", doc.Titles, m.Titles)
	eq("descriptions", doc.Descriptions, m.Descriptions)
	eq("publisher", []string{doc.Publisher}, []string{m.Publisher})
	for i, c := range doc.Creators {
		if c.Name != m.Creators[i].Name || c.Affiliation != m.Creators[i].Affiliation {
			t.Errorf("creator %d = %+v", i, c)
		}
		if m.Creators[i].ORCID != "" && !strings.HasPrefix(c.ORCID, "https://orcid.org/") {
			t.Errorf("creator %d ORCID %q not normalised", i, c.ORCID)
		}
	}
	for i, s := range doc.Subjects {
		if s.Term != m.Subjects[i].Term || s.ValueURI != m.Subjects[i].ValueURI {
			t.Errorf("subject %d = %+v", i, s)
		}
	}
	for i, r := range doc.Rights {
		if r != m.Rights[i].Name {
			t.Errorf("rights %d = %q, want %q", i, r, m.Rights[i].Name)
		}
	}
}

// xmllint validates doc against the committed kernel-4 XSD
// (publishtest.DataCiteXML); without xmllint the test is skipped, unless
// STRATA_REQUIRE_XMLLINT=1.
func xmllint(t *testing.T, doc []byte) {
	t.Helper()
	err := publishtest.DataCiteXML(doc)
	if errors.Is(err, publishtest.ErrNoXMLLint) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestXSDRejects proves the xmllint check can fail: a document the XSD must
// reject (no publisher) is rejected.
func TestXSDRejects(t *testing.T) {
	out, err := minimal().XML()
	if err != nil {
		t.Fatal(err)
	}
	xmllint(t, out)
	broken := bytes.Replace(out, []byte("<publisher>Strata demo</publisher>"), nil, 1)
	if bytes.Equal(broken, out) {
		t.Fatal("test did not remove the publisher")
	}
	if publishtest.DataCiteXML(broken) == nil {
		t.Fatal("xmllint accepted a resource without publisher")
	}
}

func TestGolden(t *testing.T) {
	out, err := full().XML()
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := json.MarshalIndent(full().Attributes(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{"full.xml": out, "full.attributes.json": append(attrs, '\n')} {
		p := filepath.Join("testdata", name)
		if *update {
			os.WriteFile(p, got, 0o644)
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from golden; got:\n%s", name, got)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*Metadata)
		code  string
		field string
	}{
		{"no identifier", func(m *Metadata) { m.URL = "" }, CodeMissing, "identifier"},
		{"bad doi", func(m *Metadata) { m.DOI = "doi:10.1/x" }, CodeBadDOI, "doi"},
		{"url scheme", func(m *Metadata) { m.URL = "javascript:alert(1)" }, CodeBadURL, "url"},
		{"no creators", func(m *Metadata) { m.Creators = nil }, CodeMissing, "creators"},
		{"blank creator", func(m *Metadata) { m.Creators[0].Name = "  " }, CodeMissing, "creators[0].name"},
		{"orcid checksum", func(m *Metadata) { m.Creators[0].ORCID = "0000-0002-1825-0098" }, CodeBadORCID, "creators[0].orcid"},
		{"orcid shape", func(m *Metadata) { m.Creators[0].ORCID = "0000-0002-1825" }, CodeBadORCID, "creators[0].orcid"},
		{"orcid other host", func(m *Metadata) { m.Creators[0].ORCID = "https://evil.example/0000-0002-1825-0097" }, CodeBadORCID, "creators[0].orcid"},
		{"no title", func(m *Metadata) { m.Titles = nil }, CodeMissing, "titles"},
		{"empty second title", func(m *Metadata) { m.Titles = append(m.Titles, "") }, CodeMissing, "titles[1]"},
		{"no publisher", func(m *Metadata) { m.Publisher = "" }, CodeMissing, "publisher"},
		{"year zero", func(m *Metadata) { m.PublicationYear = 0 }, CodeBadYear, "publicationYear"},
		{"year five digits", func(m *Metadata) { m.PublicationYear = 20260 }, CodeBadYear, "publicationYear"},
		{"year negative", func(m *Metadata) { m.PublicationYear = -2026 }, CodeBadYear, "publicationYear"},
		{"language", func(m *Metadata) { m.Language = "english language" }, CodeBadLang, "language"},
		{"date type", func(m *Metadata) { m.Dates = []Date{{Type: "Published", Value: "2026-01-01"}} }, CodeBadValue, "dates[0].type"},
		{"date value", func(m *Metadata) { m.Dates = []Date{{Type: "Issued", Value: "1 March 2026"}} }, CodeBadDate, "dates[0].value"},
		{"relation", func(m *Metadata) {
			m.RelatedIdentifiers = []Related{{Identifier: "10.1/x", Type: "DOI", Relation: "IsCousinOf"}}
		}, CodeBadValue, "relatedIdentifiers[0].relation"},
		{"related type", func(m *Metadata) {
			m.RelatedIdentifiers = []Related{{Identifier: "10.1/x", Type: "doi", Relation: "IsNewVersionOf"}}
		}, CodeBadValue, "relatedIdentifiers[0].type"},
		{"geo longitude", func(m *Metadata) { m.GeoLocations = []GeoBox{{West: -181, East: 0, South: 0, North: 1}} }, CodeBadGeo, "geoLocations[0]"},
		{"geo NaN", func(m *Metadata) { m.GeoLocations = []GeoBox{{West: math.NaN(), East: 0, South: 0, North: 1}} }, CodeBadGeo, "geoLocations[0]"},
		{"geo inverted", func(m *Metadata) { m.GeoLocations = []GeoBox{{West: 0, East: 1, South: 10, North: 1}} }, CodeBadGeo, "geoLocations[0]"},
		{"NUL in title", func(m *Metadata) { m.Titles = []string{"a\x00b"} }, CodeBadChar, "titles[0]"},
		{"ESC in description", func(m *Metadata) { m.Descriptions = []string{"\x1b[31mred"} }, CodeBadChar, "descriptions[0]"},
		{"vertical tab in name", func(m *Metadata) { m.Creators[0].Name = "Rossi,\vAnna" }, CodeBadChar, "creators[0].name"},
		{"U+FFFE", func(m *Metadata) { m.Publisher = "pub\uFFFE" }, CodeBadChar, "publisher"},
		{"invalid UTF-8", func(m *Metadata) { m.Version = "v\xff" }, CodeBadChar, "version"},
		{"control in subject", func(m *Metadata) { m.Subjects = []Subject{{Term: "ok", ValueURI: "http://x/\x07"}} }, CodeBadChar, "subjects[0].valueURI"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := minimal()
			c.edit(&m)
			err := m.Validate()
			e, ok := errs.As(err)
			if !ok {
				t.Fatalf("Validate() = %v, want a *errs.Error", err)
			}
			if e.Code != c.code || e.Kind != errs.Invalid || e.Extra["field"] != c.field {
				t.Fatalf("got code %s kind %v field %v (%v), want %s %s", e.Code, e.Kind, e.Extra["field"], err, c.code, c.field)
			}
			if _, err := m.XML(); errs.CodeOf(err) != c.code {
				t.Fatalf("XML() error %v, want code %s", err, c.code)
			}
		})
	}
}

func TestNormalizeORCID(t *testing.T) {
	cases := []struct{ in, want string }{
		{"0000-0002-1825-0097", "https://orcid.org/0000-0002-1825-0097"},
		{"https://orcid.org/0000-0001-5109-3700", "https://orcid.org/0000-0001-5109-3700"},
		{"http://orcid.org/0000-0002-1694-233X", "https://orcid.org/0000-0002-1694-233X"},
		{" 0000-0002-1694-233X ", "https://orcid.org/0000-0002-1694-233X"},
		{"0000-0002-1694-2339", ""},
		{"0000-0002-1694-233x", ""},
		{"0000000218250097", ""},
		{"", ""},
	}
	for _, c := range cases {
		got, err := NormalizeORCID(c.in)
		if (err != nil) != (c.want == "") || got != c.want {
			t.Errorf("NormalizeORCID(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestAttributes(t *testing.T) {
	a := minimal().Attributes()
	if _, ok := a["doi"]; ok {
		t.Error("doi attribute present before minting")
	}
	types := a["types"].(map[string]any)
	if types["resourceTypeGeneral"] != "Dataset" {
		t.Errorf("types = %v", types)
	}
	f := full().Attributes()
	if f["doi"] != "10.5072/strata-abcd-1234" || f["publicationYear"] != 2026 {
		t.Errorf("doi/year = %v/%v", f["doi"], f["publicationYear"])
	}
	c := f["creators"].([]any)[0].(map[string]any)
	ni := c["nameIdentifiers"].([]any)[0].(map[string]any)
	if ni["nameIdentifier"] != "https://orcid.org/0000-0002-1825-0097" || ni["nameIdentifierScheme"] != "ORCID" {
		t.Errorf("nameIdentifiers = %v", ni)
	}
	b1, _ := json.Marshal(full().Attributes())
	b2, _ := json.Marshal(full().Attributes())
	if !bytes.Equal(b1, b2) {
		t.Error("attributes JSON not deterministic")
	}
}
