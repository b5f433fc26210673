package oaipmh

import (
	"maps"
	"net/http"
	"strings"
	"testing"
)

func TestVerbsAndErrors(t *testing.T) {
	e := newEnv(t, newRepo(40), Options{PageSize: 10})
	first := e.repo.items[1].Identifier
	deleted := e.repo.items[16].Identifier
	dcOnly := e.repo.items[5].Identifier
	long := strings.Repeat("x", maxIdentifier+1)
	cases := []struct {
		name  string
		raw   string
		code  string            // "" for a normal answer
		attrs map[string]string // the request element's attributes
		check func(t *testing.T, p *parsed)
	}{
		{"Identify", q("verb", "Identify"), "", map[string]string{"verb": "Identify"}, func(t *testing.T, p *parsed) {
			if p.Identify == nil || p.Identify.Name != "Dig 2024 <test> & co" || p.Identify.Earliest != "2024-03-01T00:00:00Z" {
				t.Errorf("Identify = %+v", p.Identify)
			}
		}},
		{"Identify with argument", q("verb", "Identify", "set", "table"), errBadArgument, map[string]string{}, nil},
		{"no verb", "", errBadVerb, map[string]string{}, nil},
		{"unknown verb", q("verb", "ListEverything"), errBadVerb, map[string]string{}, nil},
		{"repeated verb", q("verb", "Identify", "verb", "Identify"), errBadVerb, map[string]string{}, nil},
		{"lowercase verb", q("verb", "identify"), errBadVerb, map[string]string{}, nil},
		{"ListMetadataFormats", q("verb", "ListMetadataFormats"), "", map[string]string{"verb": "ListMetadataFormats"}, func(t *testing.T, p *parsed) {
			if got := strings.Join(p.ListMetadataFormats.Prefixes, ","); got != "oai_dc,strata" {
				t.Errorf("formats %s", got)
			}
		}},
		{"ListMetadataFormats of a dc-only item", q("verb", "ListMetadataFormats", "identifier", dcOnly), "", map[string]string{"verb": "ListMetadataFormats", "identifier": dcOnly}, func(t *testing.T, p *parsed) {
			if got := strings.Join(p.ListMetadataFormats.Prefixes, ","); got != "oai_dc" {
				t.Errorf("formats %s", got)
			}
		}},
		{"ListMetadataFormats unknown id", q("verb", "ListMetadataFormats", "identifier", "oai:nope"), errIDDoesNotExist, map[string]string{"verb": "ListMetadataFormats", "identifier": "oai:nope"}, nil},
		{"ListMetadataFormats bad arg", q("verb", "ListMetadataFormats", "metadataPrefix", "oai_dc"), errBadArgument, map[string]string{}, nil},
		{"ListSets", q("verb", "ListSets"), "", map[string]string{"verb": "ListSets"}, func(t *testing.T, p *parsed) {
			if got := strings.Join(p.ListSets.Specs, ","); got != "table,table:contexts,table:finds,table:samples" {
				t.Errorf("sets %s", got)
			}
		}},
		{"ListSets token", q("verb", "ListSets", "resumptionToken", "abc"), errBadResumptionToken, map[string]string{"verb": "ListSets", "resumptionToken": "abc"}, nil},
		{"GetRecord", q("verb", "GetRecord", "identifier", first, "metadataPrefix", "strata"), "", map[string]string{"verb": "GetRecord", "identifier": first, "metadataPrefix": "strata"}, func(t *testing.T, p *parsed) {
			r := p.GetRecord.Records[0]
			if r.Header.Identifier != first || r.Metadata == nil || !strings.Contains(r.Metadata.Inner, "finds 1") {
				t.Errorf("record %+v", r)
			}
		}},
		{"GetRecord deleted", q("verb", "GetRecord", "identifier", deleted, "metadataPrefix", "oai_dc"), "", map[string]string{"verb": "GetRecord", "identifier": deleted, "metadataPrefix": "oai_dc"}, func(t *testing.T, p *parsed) {
			r := p.GetRecord.Records[0]
			if r.Header.Status != "deleted" || r.Metadata != nil {
				t.Errorf("deleted record %+v", r)
			}
		}},
		{"GetRecord missing prefix", q("verb", "GetRecord", "identifier", first), errBadArgument, map[string]string{}, nil},
		{"GetRecord missing id", q("verb", "GetRecord", "metadataPrefix", "oai_dc"), errBadArgument, map[string]string{}, nil},
		{"GetRecord unknown id", q("verb", "GetRecord", "identifier", "oai:nope", "metadataPrefix", "oai_dc"), errIDDoesNotExist, map[string]string{"verb": "GetRecord", "identifier": "oai:nope", "metadataPrefix": "oai_dc"}, nil},
		{"GetRecord unknown format", q("verb", "GetRecord", "identifier", first, "metadataPrefix", "marc21"), errCannotDisseminateFormat, map[string]string{"verb": "GetRecord", "identifier": first, "metadataPrefix": "marc21"}, nil},
		{"GetRecord format the item lacks", q("verb", "GetRecord", "identifier", dcOnly, "metadataPrefix", "strata"), errCannotDisseminateFormat, map[string]string{"verb": "GetRecord", "identifier": dcOnly, "metadataPrefix": "strata"}, nil},
		{"GetRecord impossible prefix", q("verb", "GetRecord", "identifier", first, "metadataPrefix", "a b<"), errBadArgument, map[string]string{}, nil},
		{"GetRecord repeated id", q("verb", "GetRecord", "identifier", first, "identifier", first, "metadataPrefix", "oai_dc"), errBadArgument, map[string]string{}, nil},
		{"GetRecord huge id", q("verb", "GetRecord", "identifier", long, "metadataPrefix", "oai_dc"), errBadArgument, map[string]string{}, nil},
		{"GetRecord invalid UTF-8 id", "verb=GetRecord&metadataPrefix=oai_dc&identifier=oai%3A%FF%FE", errBadArgument, map[string]string{}, nil},
		{"GetRecord control character id", "verb=GetRecord&metadataPrefix=oai_dc&identifier=oai%3A%01", errBadArgument, map[string]string{}, nil},
		{"bad URL encoding", "verb=Identify&x=%zz", errBadArgument, map[string]string{}, nil},
		{"ListRecords no prefix", q("verb", "ListRecords"), errBadArgument, map[string]string{}, nil},
		{"ListRecords illegal arg", q("verb", "ListRecords", "metadataPrefix", "oai_dc", "identifier", first), errBadArgument, map[string]string{}, nil},
		{"ListRecords unknown format", q("verb", "ListRecords", "metadataPrefix", "marc21"), errCannotDisseminateFormat, map[string]string{"verb": "ListRecords", "metadataPrefix": "marc21"}, nil},
		{"ListIdentifiers bad from", q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "from", "2024-13-01"), errBadArgument, map[string]string{}, nil},
		{"ListIdentifiers from with offset", q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "from", "2024-03-01T00:00:00+01:00"), errBadArgument, map[string]string{}, nil},
		{"ListIdentifiers finer granularity", q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "from", "2024-03-01T00:00:00.5Z"), errBadArgument, map[string]string{}, nil},
		{"ListIdentifiers minutes granularity", q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "from", "2024-03-01T00:00Z"), errBadArgument, map[string]string{}, nil},
		{"ListIdentifiers mixed granularity", q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "from", "2024-03-01", "until", "2024-03-02T00:00:00Z"), errBadArgument, map[string]string{}, nil},
		{"ListIdentifiers from after until", q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "from", "2024-03-02", "until", "2024-03-01"), errBadArgument, map[string]string{}, nil},
		{"ListIdentifiers invalid set", q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "set", "table::x"), errBadArgument, map[string]string{}, nil},
		{"ListIdentifiers unknown set", q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "set", "table:burials"), errNoRecordsMatch, map[string]string{"verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "set": "table:burials"}, nil},
		{"ListIdentifiers nothing in range", q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "from", "2030-01-01", "until", "2030-01-02"), errNoRecordsMatch, map[string]string{"verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "from": "2030-01-01", "until": "2030-01-02"}, nil},
		{"ListIdentifiers until before earliest", q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "until", "2020-01-01T00:00:00Z"), errNoRecordsMatch, map[string]string{"verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "until": "2020-01-01T00:00:00Z"}, nil},
		{"ListRecords token with other args", q("verb", "ListRecords", "metadataPrefix", "oai_dc", "resumptionToken", "x"), errBadArgument, map[string]string{}, nil},
		{"ListRecords garbage token", q("verb", "ListRecords", "resumptionToken", "<&\"'>"), errBadResumptionToken, map[string]string{"verb": "ListRecords", "resumptionToken": "<&\"'>"}, nil},
		{"ListRecords huge token", q("verb", "ListRecords", "resumptionToken", strings.Repeat("A", maxToken+1)), errBadArgument, map[string]string{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				w := e.do(method, c.raw)
				if w.Code != http.StatusOK {
					t.Fatalf("%s: status %d", method, w.Code)
				}
				p := parse(t, w.Body.Bytes())
				if p.errCode() != c.code {
					t.Errorf("%s: error %q, want %q\n%s", method, p.errCode(), c.code, w.Body)
				}
				if got := p.attrs(); !maps.Equal(got, c.attrs) {
					t.Errorf("%s: request attributes %v, want %v", method, got, c.attrs)
				}
				if p.ResponseDate != "2025-06-07T08:09:10Z" || p.Request.URL != "http://strata.test/dig/oai" {
					t.Errorf("%s: responseDate %q, request %q", method, p.ResponseDate, p.Request.URL)
				}
				if c.check != nil && c.code == "" {
					c.check(t, p)
				}
			}
		})
	}
}

func TestNoSetHierarchy(t *testing.T) {
	repo := newRepo(5)
	repo.sets = nil
	e := newEnv(t, repo, Options{})
	for _, raw := range []string{
		q("verb", "ListSets"),
		q("verb", "ListRecords", "metadataPrefix", "oai_dc", "set", "table:finds"),
		q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "set", "table"),
	} {
		if p := e.get(raw); p.errCode() != errNoSetHierarchy {
			t.Errorf("%s: %q", raw, p.errCode())
		}
	}
}

func TestNoMetadataFormats(t *testing.T) {
	repo := newRepo(3)
	repo.items[0].Formats = []string{}
	e := newEnv(t, repo, Options{})
	if p := e.get(q("verb", "ListMetadataFormats", "identifier", repo.items[0].Identifier)); p.errCode() != errNoMetadataFormats {
		t.Errorf("item with no formats: %q", p.errCode())
	}
	repo.formats = nil
	if p := e.get(q("verb", "ListMetadataFormats")); p.errCode() != errNoMetadataFormats {
		t.Errorf("repository with no formats: %q", p.errCode())
	}
}

func TestHTTP(t *testing.T) {
	e := newEnv(t, newRepo(3), Options{})
	raw := q("verb", "ListRecords", "metadataPrefix", "oai_dc")
	get := e.do(http.MethodGet, raw).Body.String()
	if post := e.do(http.MethodPost, raw).Body.String(); post != get {
		t.Errorf("POST answered differently from GET:\n%s\n%s", post, get)
	}
	if again := e.do(http.MethodGet, raw).Body.String(); again != get {
		t.Error("the same request gave different bytes")
	}
	for _, m := range []string{http.MethodPut, http.MethodDelete} {
		w := e.do(m, raw)
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, POST" {
			t.Errorf("%s: %d %q", m, w.Code, w.Header().Get("Allow"))
		}
	}
	// POST with another content type, and a body over the bound.
	for name, r := range map[string]*http.Request{
		"json":     withType(httptestPost(raw), "application/json"),
		"too long": withType(httptestPost(raw+"&x="+strings.Repeat("a", maxRequest)), "application/x-www-form-urlencoded"),
	} {
		w := httpDo(e, r)
		if p := parse(t, w.Body.Bytes()); p.errCode() != errBadArgument || len(p.Request.Attrs) != 0 {
			t.Errorf("%s: %q %v", name, p.errCode(), p.Request.Attrs)
		}
	}
	if p := e.get(raw + "&x=" + strings.Repeat("a", maxRequest)); p.errCode() != errBadArgument {
		t.Errorf("long query: %q", p.errCode())
	}
}
