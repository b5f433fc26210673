package oaipmh

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// memRepo is a small in-memory Repository: items in Position order.
type memRepo struct {
	id           Identity
	sets         []Set
	formats      []Format
	items        []Item
	filterPrefix bool // apply Query.Prefix as the doc recommends
}

var testFormat = Format{Prefix: "strata", Schema: "http://strata.test/thing.xsd", Namespace: "urn:strata:test:oaipmh"}

var base = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

func writeThing(w io.Writer, id, label string) error {
	_, err := fmt.Fprintf(w, `<t:thing xmlns:t="urn:strata:test:oaipmh"><t:id>%s</t:id><t:label>%s</t:label></t:thing>`, escape(id), escape(label))
	return err
}

func metaFor(id string, dc DC) func(io.Writer, string) error {
	return func(w io.Writer, prefix string) error {
		switch prefix {
		case "oai_dc":
			return WriteDC(w, dc)
		case "strata":
			return writeThing(w, id, strings.Join(dc.Title, "; "))
		}
		return fmt.Errorf("no format %s", prefix)
	}
}

// newRepo builds n items spread over three tables, with datestamps 37
// minutes apart (some with fractions of a second), every 17th deleted and
// every 5th lacking the "strata" format.
func newRepo(n int) *memRepo {
	r := &memRepo{
		id: Identity{RepositoryName: "Dig 2024 <test> & co", BaseURL: "http://strata.test/dig/oai",
			AdminEmails: []string{"admin@strata.test"}, EarliestDatestamp: base, DeletedRecord: DeletedPersistent},
		sets: []Set{
			{Spec: "table", Name: "Tables"},
			{Spec: "table:contexts", Name: "Stratigraphic units", Description: "Units & <layers>"},
			{Spec: "table:finds", Name: "Finds"},
			{Spec: "table:samples", Name: "Samples"},
		},
		formats:      []Format{FormatDC, testFormat},
		filterPrefix: true,
	}
	tables := []string{"contexts", "finds", "samples"}
	for i := 0; i < n; i++ {
		tb := tables[i%3]
		id := fmt.Sprintf("oai:strata.test:dig/%s/%d", tb, i)
		it := Item{
			Identifier: id,
			Datestamp:  base.Add(time.Duration(i) * 37 * time.Minute).Add(time.Duration(i%4) * 250 * time.Millisecond),
			Position:   fmt.Sprintf("%06d", i),
			Deleted:    i%17 == 16,
		}
		switch {
		case i%11 == 10: // in no set
		case i%7 == 3:
			it.Sets = []string{"table:" + tb, "table:" + tables[(i+1)%3]}
		default:
			it.Sets = []string{"table:" + tb}
		}
		if i%5 == 0 {
			it.Formats = []string{"oai_dc"}
		}
		it.Metadata = metaFor(id, DC{Title: []string{fmt.Sprintf("%s %d", tb, i)}, Type: []string{tb}})
		r.items = append(r.items, it)
	}
	return r
}

func (r *memRepo) Identify(context.Context) (Identity, error) { return r.id, nil }
func (r *memRepo) Sets(context.Context) ([]Set, error)        { return r.sets, nil }
func (r *memRepo) Formats() []Format                          { return r.formats }

func (r *memRepo) Get(_ context.Context, id string) (Item, bool, error) {
	for _, it := range r.items {
		if it.Identifier == id {
			return it, true, nil
		}
	}
	return Item{}, false, nil
}

func (r *memRepo) List(_ context.Context, q Query) ([]Item, bool, error) {
	var out []Item
	for _, it := range r.items {
		if it.Position <= q.After || !q.Matches(it) || (r.filterPrefix && !it.has(q.Prefix)) {
			continue
		}
		if len(out) == q.Limit {
			return out, true, nil
		}
		out = append(out, it)
	}
	return out, false, nil
}

// selection is the test's own statement of which identifiers a query selects,
// written without Query.Matches so the two check each other.
func (r *memRepo) selection(prefix, set string, from, until time.Time) []string {
	var ids []string
	for _, it := range r.items {
		if it.Formats != nil && !contains(it.Formats, prefix) {
			continue
		}
		if set != "" {
			in := false
			for _, s := range it.Sets {
				in = in || s == set || strings.HasPrefix(s, set+":")
			}
			if !in {
				continue
			}
		}
		sec := it.Datestamp.Unix()
		if !from.IsZero() && sec < from.Unix() || !until.IsZero() && sec > until.Unix() {
			continue
		}
		ids = append(ids, it.Identifier)
	}
	sort.Strings(ids)
	return ids
}

// parsed is the part of a response the tests read.
type parsed struct {
	XMLName      xml.Name
	ResponseDate string `xml:"responseDate"`
	Request      struct {
		Attrs []xml.Attr `xml:",any,attr"`
		URL   string     `xml:",chardata"`
	} `xml:"request"`
	Errors []struct {
		Code string `xml:"code,attr"`
	} `xml:"error"`
	Identify *struct {
		Name     string   `xml:"repositoryName"`
		Emails   []string `xml:"adminEmail"`
		Earliest string   `xml:"earliestDatestamp"`
	} `xml:"Identify"`
	ListMetadataFormats *struct {
		Prefixes []string `xml:"metadataFormat>metadataPrefix"`
	} `xml:"ListMetadataFormats"`
	ListSets *struct {
		Specs []string `xml:"set>setSpec"`
	} `xml:"ListSets"`
	GetRecord *struct {
		Records []record `xml:"record"`
	} `xml:"GetRecord"`
	ListRecords *struct {
		Records []record `xml:"record"`
		Token   *rtoken  `xml:"resumptionToken"`
	} `xml:"ListRecords"`
	ListIdentifiers *struct {
		Headers []header `xml:"header"`
		Token   *rtoken  `xml:"resumptionToken"`
	} `xml:"ListIdentifiers"`
}

type header struct {
	Status     string   `xml:"status,attr"`
	Identifier string   `xml:"identifier"`
	Datestamp  string   `xml:"datestamp"`
	Sets       []string `xml:"setSpec"`
}

type record struct {
	Header   header `xml:"header"`
	Metadata *struct {
		Inner string `xml:",innerxml"`
	} `xml:"metadata"`
}

type rtoken struct {
	Value  string `xml:",chardata"`
	Cursor string `xml:"cursor,attr"`
}

func (p *parsed) errCode() string {
	if len(p.Errors) == 0 {
		return ""
	}
	return p.Errors[0].Code
}

func (p *parsed) attrs() map[string]string {
	m := map[string]string{}
	for _, a := range p.Request.Attrs {
		m[a.Name.Local] = a.Value
	}
	return m
}
