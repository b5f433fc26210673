package datacite

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-archaeo/strata/core/errs"
)

// Metadata is the DataCite description of one snapshot.
type Metadata struct {
	// DOI is the identifier, "10.1234/abc", without a resolver prefix. Empty
	// before minting: the XML then identifies the resource by URL.
	DOI string
	// URL is the landing page the DOI resolves to.
	URL string
	// Titles; the first is the main title.
	Titles []string
	// Descriptions are abstracts (descriptionType Abstract).
	Descriptions []string
	// Creators in citation order.
	Creators []Creator
	// Publisher is the entity that makes the data available.
	Publisher string
	// PublicationYear, four digits.
	PublicationYear int
	// ResourceType is the free-text type under resourceTypeGeneral Dataset
	// (e.g. "Excavation database"); may be empty.
	ResourceType string
	Subjects     []Subject
	Rights       []Rights
	Version      string
	// Language is an xs:language tag ("en", "it", "de-CH").
	Language string
	Dates    []Date
	// RelatedIdentifiers link versions and parts.
	RelatedIdentifiers []Related
	// Formats are media types ("application/zip").
	Formats []string
	// Sizes are free text ("12 MB", "3402 records").
	Sizes        []string
	GeoLocations []GeoBox
}

// Creator is a person who made the data.
type Creator struct {
	// Name as cited, "Family, Given".
	Name       string
	GivenName  string
	FamilyName string
	// ORCID as "0000-0002-1825-0097" or "https://orcid.org/0000-0002-1825-0097".
	ORCID       string
	Affiliation string
}

// Subject is a keyword, optionally from a scheme (Getty AAT terms carry
// Scheme "AAT", SchemeURI http://vocab.getty.edu/aat/ and the term's ValueURI).
type Subject struct {
	Term, Scheme, SchemeURI, ValueURI string
}

// Rights is a licence. Identifier is an SPDX id ("CC-BY-4.0").
type Rights struct {
	URI, Identifier, Name string
}

// Date is a dated event of the resource. Type is a DataCite dateType
// (Issued, Created, Updated, ...); Value is "YYYY-MM-DD" or an RFC 3339 time.
type Date struct {
	Type, Value string
}

// Related is a related identifier. Type is a DataCite relatedIdentifierType
// (DOI, URL, ...); Relation a relationType (IsNewVersionOf, HasPart, ...).
type Related struct {
	Identifier, Type, Relation string
}

// GeoBox is a bounding box in WGS 84 degrees.
type GeoBox struct {
	West, East, South, North float64
}

// Stable error codes returned by Validate (all of kind errs.Invalid).
const (
	CodeMissing  = "datacite_missing_property"
	CodeBadORCID = "datacite_bad_orcid"
	CodeBadYear  = "datacite_bad_year"
	CodeBadChar  = "datacite_bad_char"
	CodeBadDate  = "datacite_bad_date"
	CodeBadValue = "datacite_bad_value"
	CodeBadGeo   = "datacite_bad_geolocation"
	CodeBadDOI   = "datacite_bad_doi"
	CodeBadLang  = "datacite_bad_language"
	CodeBadURL   = "datacite_bad_url"
)

func invalid(code, field, format string, args ...any) *errs.Error {
	return errs.Newf(errs.Invalid, code, "%s: "+format, append([]any{field}, args...)...).With("field", field)
}

var (
	doiRe  = regexp.MustCompile(`^10\.[0-9]{4,9}(\.[0-9]+)*/\S+$`)
	langRe = regexp.MustCompile(`^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$`)
	orcRe  = regexp.MustCompile(`^[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]$`)
)

// relationTypes are the kernel-4 relationType values this package accepts.
// "Other" (4.7) is left out: it needs relationTypeInformation, which
// Related does not carry.
var relationTypes = set("IsCitedBy Cites IsSupplementTo IsSupplementedBy IsContinuedBy Continues IsNewVersionOf IsPreviousVersionOf IsPartOf HasPart IsPublishedIn IsReferencedBy References IsDocumentedBy Documents IsCompiledBy Compiles IsVariantFormOf IsOriginalFormOf IsIdenticalTo HasMetadata IsMetadataFor Reviews IsReviewedBy IsDerivedFrom IsSourceOf Describes IsDescribedBy HasVersion IsVersionOf Requires IsRequiredBy Obsoletes IsObsoletedBy Collects IsCollectedBy HasTranslation IsTranslationOf")

var relatedTypes = set("ARK arXiv bibcode CSTR DOI EAN13 EISSN Handle IGSN ISBN ISSN ISTC LISSN LSID PMID PURL RAiD RRID SWHID UPC URL URN w3id")

var dateTypes = set("Accepted Available Collected Copyrighted Coverage Created Issued Other Submitted Updated Valid Withdrawn")

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// Validate checks what DataCite requires and what the XSD would reject:
// identifier (DOI or URL), at least one creator with a name, a title, the
// publisher, a four-digit publication year; ORCID checksums; dates; known
// relation and identifier types; coordinates in range; and text that XML 1.0
// can carry. Errors are *errs.Error of kind Invalid with one of the Code
// constants and an extra "field" naming the property.
func (m Metadata) Validate() error {
	if m.DOI == "" && m.URL == "" {
		return invalid(CodeMissing, "identifier", "a DOI or a landing page URL is required")
	}
	if m.DOI != "" && !doiRe.MatchString(m.DOI) {
		return invalid(CodeBadDOI, "doi", "%q is not a DOI name (10.prefix/suffix)", m.DOI)
	}
	if m.URL != "" && !(strings.HasPrefix(m.URL, "https://") || strings.HasPrefix(m.URL, "http://")) {
		return invalid(CodeBadURL, "url", "the landing page must be an http(s) URL")
	}
	if len(m.Creators) == 0 {
		return invalid(CodeMissing, "creators", "at least one creator is required")
	}
	for i, c := range m.Creators {
		f := fmt.Sprintf("creators[%d]", i)
		if strings.TrimSpace(c.Name) == "" {
			return invalid(CodeMissing, f+".name", "a creator needs a name")
		}
		if c.ORCID != "" {
			if _, err := NormalizeORCID(c.ORCID); err != nil {
				return invalid(CodeBadORCID, f+".orcid", "%v", err)
			}
		}
	}
	if len(m.Titles) == 0 || strings.TrimSpace(m.Titles[0]) == "" {
		return invalid(CodeMissing, "titles", "a title is required")
	}
	for i, t := range m.Titles {
		if strings.TrimSpace(t) == "" {
			return invalid(CodeMissing, fmt.Sprintf("titles[%d]", i), "a title may not be empty")
		}
	}
	if strings.TrimSpace(m.Publisher) == "" {
		return invalid(CodeMissing, "publisher", "the publisher is required")
	}
	if m.PublicationYear < 1000 || m.PublicationYear > 9999 {
		return invalid(CodeBadYear, "publicationYear", "%d is not a four-digit year", m.PublicationYear)
	}
	if m.Language != "" && !langRe.MatchString(m.Language) {
		return invalid(CodeBadLang, "language", "%q is not a language tag", m.Language)
	}
	for i, d := range m.Dates {
		f := fmt.Sprintf("dates[%d]", i)
		if !dateTypes[d.Type] {
			return invalid(CodeBadValue, f+".type", "%q is not a DataCite dateType", d.Type)
		}
		if _, err := time.Parse(time.DateOnly, d.Value); err != nil {
			if _, err := time.Parse(time.RFC3339, d.Value); err != nil {
				return invalid(CodeBadDate, f+".value", "%q is neither YYYY-MM-DD nor RFC 3339", d.Value)
			}
		}
	}
	for i, r := range m.RelatedIdentifiers {
		f := fmt.Sprintf("relatedIdentifiers[%d]", i)
		if strings.TrimSpace(r.Identifier) == "" {
			return invalid(CodeMissing, f+".identifier", "a related identifier may not be empty")
		}
		if !relatedTypes[r.Type] {
			return invalid(CodeBadValue, f+".type", "%q is not a DataCite relatedIdentifierType", r.Type)
		}
		if !relationTypes[r.Relation] {
			return invalid(CodeBadValue, f+".relation", "%q is not a DataCite relationType", r.Relation)
		}
	}
	for i, s := range m.Subjects {
		if strings.TrimSpace(s.Term) == "" {
			return invalid(CodeMissing, fmt.Sprintf("subjects[%d].term", i), "a subject needs a term")
		}
	}
	for i, r := range m.Rights {
		if r.Name == "" && r.URI == "" && r.Identifier == "" {
			return invalid(CodeMissing, fmt.Sprintf("rights[%d]", i), "a rights entry needs a name, URI or identifier")
		}
	}
	for i, g := range m.GeoLocations {
		f := fmt.Sprintf("geoLocations[%d]", i)
		for _, v := range []float64{g.West, g.East} {
			if !(v >= -180 && v <= 180) { // also false for NaN
				return invalid(CodeBadGeo, f, "longitude %v outside -180..180", v)
			}
		}
		for _, v := range []float64{g.South, g.North} {
			if !(v >= -90 && v <= 90) {
				return invalid(CodeBadGeo, f, "latitude %v outside -90..90", v)
			}
		}
		if g.South > g.North {
			return invalid(CodeBadGeo, f, "south %v is north of north %v", g.South, g.North)
		}
	}
	return m.checkText()
}

// checkText refuses any string XML 1.0 cannot represent.
func (m Metadata) checkText() error {
	var bad string
	m.eachString(func(field, s string) {
		if bad == "" && !xmlSafe(s) {
			bad = field
		}
	})
	if bad != "" {
		return invalid(CodeBadChar, bad, "contains a character XML 1.0 forbids (control character or invalid UTF-8)")
	}
	return nil
}

func (m Metadata) eachString(f func(field, s string)) {
	f("doi", m.DOI)
	f("url", m.URL)
	for i, s := range m.Titles {
		f(fmt.Sprintf("titles[%d]", i), s)
	}
	for i, s := range m.Descriptions {
		f(fmt.Sprintf("descriptions[%d]", i), s)
	}
	for i, c := range m.Creators {
		p := fmt.Sprintf("creators[%d].", i)
		f(p+"name", c.Name)
		f(p+"givenName", c.GivenName)
		f(p+"familyName", c.FamilyName)
		f(p+"orcid", c.ORCID)
		f(p+"affiliation", c.Affiliation)
	}
	f("publisher", m.Publisher)
	f("resourceType", m.ResourceType)
	for i, s := range m.Subjects {
		p := fmt.Sprintf("subjects[%d].", i)
		f(p+"term", s.Term)
		f(p+"scheme", s.Scheme)
		f(p+"schemeURI", s.SchemeURI)
		f(p+"valueURI", s.ValueURI)
	}
	for i, r := range m.Rights {
		p := fmt.Sprintf("rights[%d].", i)
		f(p+"uri", r.URI)
		f(p+"identifier", r.Identifier)
		f(p+"name", r.Name)
	}
	f("version", m.Version)
	for i, r := range m.RelatedIdentifiers {
		f(fmt.Sprintf("relatedIdentifiers[%d].identifier", i), r.Identifier)
	}
	for i, s := range m.Formats {
		f(fmt.Sprintf("formats[%d]", i), s)
	}
	for i, s := range m.Sizes {
		f(fmt.Sprintf("sizes[%d]", i), s)
	}
}

// xmlSafe reports whether s is valid UTF-8 made only of XML 1.0 Chars.
func xmlSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20:
			return false
		case r == 0xFFFE || r == 0xFFFF:
			return false
		}
	}
	return true
}

// NormalizeORCID returns the ORCID iD as "https://orcid.org/XXXX-XXXX-XXXX-XXXX"
// after checking its ISO 7064 mod 11-2 check digit. It accepts the bare iD
// and the http(s)://orcid.org/ forms.
func NormalizeORCID(s string) (string, error) {
	id := strings.TrimSpace(s)
	for _, p := range []string{"https://orcid.org/", "http://orcid.org/"} {
		id = strings.TrimPrefix(id, p)
	}
	if !orcRe.MatchString(id) {
		return "", fmt.Errorf("ORCID %q is not of the form 0000-0000-0000-000X", s)
	}
	digits := strings.ReplaceAll(id, "-", "")
	if want := orcidCheck(digits[:15]); digits[15] != want {
		return "", fmt.Errorf("ORCID %q fails its check digit (expected %c)", s, want)
	}
	return "https://orcid.org/" + id, nil
}

// orcidCheck computes the ISO 7064 mod 11-2 check character of 15 digits.
func orcidCheck(base string) byte {
	total := 0
	for i := 0; i < len(base); i++ {
		total = (total + int(base[i]-'0')) * 2
	}
	r := (12 - total%11) % 11
	if r == 10 {
		return 'X'
	}
	return byte('0' + r)
}
