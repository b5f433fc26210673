package oaipmh

import (
	"fmt"
	"io"
)

// DC is an unqualified Dublin Core description, the oai_dc format. Each field
// holds zero or more values, written in the order given.
type DC struct {
	Title, Creator, Subject, Description, Publisher, Contributor, Date,
	Type, Format, Identifier, Source, Language, Relation, Coverage, Rights []string
}

// WriteDC writes dc as one oai_dc:dc element, with its namespaces and
// xsi:schemaLocation, ready to be the content of an OAI-PMH metadata element.
// Values are escaped; characters XML cannot carry are dropped and invalid
// UTF-8 becomes U+FFFD. Empty values are skipped.
func WriteDC(w io.Writer, dc DC) error {
	e := &errWriter{w: w}
	e.s(`<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"`,
		` xmlns:dc="http://purl.org/dc/elements/1.1/"`,
		` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`,
		` xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd">`)
	// The order of the fifteen elements is oai_dc's (any order is valid;
	// a fixed one keeps output deterministic).
	for _, f := range []struct {
		name string
		vals []string
	}{
		{"dc:title", dc.Title}, {"dc:creator", dc.Creator}, {"dc:subject", dc.Subject},
		{"dc:description", dc.Description}, {"dc:publisher", dc.Publisher},
		{"dc:contributor", dc.Contributor}, {"dc:date", dc.Date}, {"dc:type", dc.Type},
		{"dc:format", dc.Format}, {"dc:identifier", dc.Identifier}, {"dc:source", dc.Source},
		{"dc:language", dc.Language}, {"dc:relation", dc.Relation},
		{"dc:coverage", dc.Coverage}, {"dc:rights", dc.Rights},
	} {
		for _, v := range f.vals {
			if v == "" {
				continue
			}
			e.elem(f.name, v)
		}
	}
	e.s("</oai_dc:dc>")
	if e.err != nil {
		return fmt.Errorf("oaipmh: write oai_dc: %w", e.err)
	}
	return nil
}
