package datacite

import (
	"strconv"
	"strings"
)

// Namespace is the DataCite kernel-4 XML namespace.
const Namespace = "http://datacite.org/schema/kernel-4"

// SchemaLocation is where the XSD lives (written in xsi:schemaLocation).
const SchemaLocation = "https://schema.datacite.org/meta/kernel-4/metadata.xsd"

// XML renders the metadata as a DataCite kernel-4 <resource> document. It
// validates first and returns Validate's error unchanged. Output is
// deterministic: properties in a fixed order, lists in the order given.
func (m Metadata) XML() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	var b xmlBuilder
	b.raw(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.raw(`<resource xmlns="` + Namespace + `" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="` + Namespace + ` ` + SchemaLocation + `">` + "\n")
	if m.DOI != "" {
		b.elem(1, "identifier", m.DOI, "identifierType", "DOI")
	} else {
		b.elem(1, "identifier", m.URL, "identifierType", "URL")
	}
	b.open(1, "creators")
	for _, c := range m.Creators {
		b.open(2, "creator")
		if c.GivenName != "" || c.FamilyName != "" || c.ORCID != "" {
			b.elem(3, "creatorName", c.Name, "nameType", "Personal")
		} else {
			b.elem(3, "creatorName", c.Name)
		}
		b.opt(3, "givenName", c.GivenName)
		b.opt(3, "familyName", c.FamilyName)
		if c.ORCID != "" {
			id, _ := NormalizeORCID(c.ORCID) // checked by Validate
			b.elem(3, "nameIdentifier", id, "nameIdentifierScheme", "ORCID", "schemeURI", "https://orcid.org")
		}
		if strings.TrimSpace(c.Affiliation) != "" {
			b.elem(3, "affiliation", c.Affiliation)
		}
		b.close(2, "creator")
	}
	b.close(1, "creators")
	b.open(1, "titles")
	for _, t := range m.Titles {
		b.elem(2, "title", t)
	}
	b.close(1, "titles")
	b.elem(1, "publisher", m.Publisher)
	b.elem(1, "publicationYear", strconv.Itoa(m.PublicationYear))
	b.elem(1, "resourceType", m.ResourceType, "resourceTypeGeneral", "Dataset")
	if len(m.Subjects) > 0 {
		b.open(1, "subjects")
		for _, s := range m.Subjects {
			b.elem(2, "subject", s.Term, "subjectScheme", s.Scheme, "schemeURI", s.SchemeURI, "valueURI", s.ValueURI)
		}
		b.close(1, "subjects")
	}
	if len(m.Dates) > 0 {
		b.open(1, "dates")
		for _, d := range m.Dates {
			b.elem(2, "date", d.Value, "dateType", d.Type)
		}
		b.close(1, "dates")
	}
	b.opt(1, "language", m.Language)
	if len(m.RelatedIdentifiers) > 0 {
		b.open(1, "relatedIdentifiers")
		for _, r := range m.RelatedIdentifiers {
			b.elem(2, "relatedIdentifier", r.Identifier, "relatedIdentifierType", r.Type, "relationType", r.Relation)
		}
		b.close(1, "relatedIdentifiers")
	}
	b.list(1, "sizes", "size", m.Sizes)
	b.list(1, "formats", "format", m.Formats)
	b.opt(1, "version", m.Version)
	if len(m.Rights) > 0 {
		b.open(1, "rightsList")
		for _, r := range m.Rights {
			scheme, schemeURI := "", ""
			if r.Identifier != "" {
				scheme, schemeURI = "SPDX", "https://spdx.org/licenses/"
			}
			b.elem(2, "rights", r.Name, "rightsURI", r.URI, "rightsIdentifier", r.Identifier,
				"rightsIdentifierScheme", scheme, "schemeURI", schemeURI)
		}
		b.close(1, "rightsList")
	}
	if len(m.Descriptions) > 0 {
		b.open(1, "descriptions")
		for _, d := range m.Descriptions {
			b.elem(2, "description", d, "descriptionType", "Abstract")
		}
		b.close(1, "descriptions")
	}
	if len(m.GeoLocations) > 0 {
		b.open(1, "geoLocations")
		for _, g := range m.GeoLocations {
			b.open(2, "geoLocation")
			b.open(3, "geoLocationBox")
			b.elem(4, "westBoundLongitude", num(g.West))
			b.elem(4, "eastBoundLongitude", num(g.East))
			b.elem(4, "southBoundLatitude", num(g.South))
			b.elem(4, "northBoundLatitude", num(g.North))
			b.close(3, "geoLocationBox")
			b.close(2, "geoLocation")
		}
		b.close(1, "geoLocations")
	}
	b.raw("</resource>\n")
	return []byte(b.String()), nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// xmlBuilder writes indented elements with escaped text and attributes.
type xmlBuilder struct{ strings.Builder }

func (b *xmlBuilder) raw(s string) { b.WriteString(s) }

func (b *xmlBuilder) indent(n int) { b.WriteString(strings.Repeat("  ", n)) }

func (b *xmlBuilder) open(n int, name string) {
	b.indent(n)
	b.WriteString("<" + name + ">\n")
}

func (b *xmlBuilder) close(n int, name string) {
	b.indent(n)
	b.WriteString("</" + name + ">\n")
}

// elem writes <name a="v"...>text</name>; attributes with empty values are
// left out.
func (b *xmlBuilder) elem(n int, name, text string, attrs ...string) {
	b.indent(n)
	b.WriteString("<" + name)
	for i := 0; i+1 < len(attrs); i += 2 {
		if attrs[i+1] == "" {
			continue
		}
		b.WriteString(" " + attrs[i] + `="`)
		escape(&b.Builder, attrs[i+1], true)
		b.WriteString(`"`)
	}
	b.WriteString(">")
	escape(&b.Builder, text, false)
	b.WriteString("</" + name + ">\n")
}

func (b *xmlBuilder) opt(n int, name, text string) {
	if text != "" {
		b.elem(n, name, text)
	}
}

func (b *xmlBuilder) list(n int, wrap, name string, items []string) {
	if len(items) == 0 {
		return
	}
	b.open(n, wrap)
	for _, s := range items {
		b.elem(n+1, name, s)
	}
	b.close(n, wrap)
}

// escape writes s as XML character data. CR is always a character
// reference (a parser would otherwise normalise it away); in attributes
// tab and LF are too, for the same reason.
func escape(w *strings.Builder, s string, attr bool) {
	for _, r := range s {
		switch r {
		case '&':
			w.WriteString("&amp;")
		case '<':
			w.WriteString("&lt;")
		case '>':
			w.WriteString("&gt;")
		case '"':
			if attr {
				w.WriteString("&quot;")
			} else {
				w.WriteRune(r)
			}
		case '\r':
			w.WriteString("&#xD;")
		case '\n', '\t':
			if attr {
				w.WriteString("&#x" + strconv.FormatInt(int64(r), 16) + ";")
			} else {
				w.WriteRune(r)
			}
		default:
			w.WriteRune(r)
		}
	}
}
