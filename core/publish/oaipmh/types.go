package oaipmh

import (
	"context"
	"io"
	"time"
)

// Deleted-record support values for Identity.DeletedRecord.
const (
	DeletedNo         = "no"
	DeletedTransient  = "transient"
	DeletedPersistent = "persistent"
)

// Repository is what the handler needs from the data behind it. Every method
// sees only public data; the handler adds nothing the Repository did not give.
type Repository interface {
	// Identify describes the repository.
	Identify(ctx context.Context) (Identity, error)
	// Sets lists the set hierarchy (e.g. one set per public table). An
	// empty list means the repository has no sets: ListSets and any set
	// argument answer noSetHierarchy.
	Sets(ctx context.Context) ([]Set, error)
	// Formats lists the metadata formats every item may be disseminated in.
	Formats() []Format
	// List returns up to q.Limit items matching q (see Query) in a stable
	// order, starting after the position q.After ("" for the start), and
	// whether more items follow the last one returned.
	List(ctx context.Context, q Query) (items []Item, more bool, err error)
	// Get returns the item with this identifier, or false if there is none.
	Get(ctx context.Context, identifier string) (Item, bool, error)
}

// Identity answers Identify. The granularity is always seconds
// (YYYY-MM-DDThh:mm:ssZ).
type Identity struct {
	RepositoryName string
	// BaseURL is the absolute URL of the OAI-PMH endpoint; it is echoed in
	// every response's request element.
	BaseURL string
	// AdminEmails must not be empty.
	AdminEmails       []string
	EarliestDatestamp time.Time
	// DeletedRecord is DeletedNo, DeletedTransient or DeletedPersistent
	// ("" means DeletedNo).
	DeletedRecord string
}

// Set is one set of the hierarchy.
type Set struct {
	// Spec must satisfy ValidSetSpec, e.g. "table:finds"; a colon makes
	// "table" the parent set.
	Spec string
	Name string
	// Description, if not empty, is written as an oai_dc description in
	// setDescription.
	Description string
}

// Format is a metadata format the repository disseminates.
type Format struct {
	// Prefix must satisfy ValidPrefix, e.g. "oai_dc".
	Prefix    string
	Schema    string // URL of the XSD
	Namespace string // namespace URI of the metadata's root element
}

// FormatDC is the oai_dc format every OAI-PMH repository must support; write
// its metadata with WriteDC.
var FormatDC = Format{
	Prefix:    "oai_dc",
	Schema:    "http://www.openarchives.org/OAI/2.0/oai_dc.xsd",
	Namespace: "http://www.openarchives.org/OAI/2.0/oai_dc/",
}

// FormatOAIDataCite is DataCite's OAI envelope (oai_datacite), the format
// DataCite's own OAI-PMH provider uses: an oai_datacite element holding
// schemaVersion, datacentreSymbol and a payload with the kernel-4 resource.
var FormatOAIDataCite = Format{
	Prefix:    "oai_datacite",
	Schema:    "http://schema.datacite.org/oai/oai-1.1/oai.xsd",
	Namespace: "http://schema.datacite.org/oai/oai-1.1/",
}

// Query selects items for Repository.List.
type Query struct {
	// Prefix is the metadata format asked for. A repository should leave
	// out items lacking it; if it does not, the handler skips them, but a
	// resumed list whose remaining items all lack it then ends in
	// noRecordsMatch (a response must hold at least one record).
	Prefix string
	// Set is a set spec; "" means any. An item is in set S when one of its
	// Sets equals S or starts with S+":" (sets are hierarchical).
	Set string
	// From, when not zero, keeps items whose datestamp, truncated to the
	// second, is at or after From.
	From time.Time
	// Until, when not zero, keeps items whose datestamp, truncated to the
	// second, is at or before Until: in SQL, datestamp < Until + 1 second.
	Until time.Time
	// After is the Position of the last item of the previous page ("" for
	// the first page). It comes from a signed token but a repository must
	// still treat it as untrusted input.
	After string
	// Limit is the most items to return (at least 1).
	Limit int
}

// Matches reports whether it satisfies the set and datestamp parts of q
// (not After or Limit); a Repository may use it to filter, and must
// select the same items in any case.
func (q Query) Matches(it Item) bool {
	if q.Set != "" && !inSet(it.Sets, q.Set) {
		return false
	}
	d := it.Datestamp.UTC().Truncate(time.Second)
	if !q.From.IsZero() && d.Before(q.From) {
		return false
	}
	if !q.Until.IsZero() && d.After(q.Until) {
		return false
	}
	return true
}

func inSet(sets []string, spec string) bool {
	for _, s := range sets {
		if s == spec || (len(s) > len(spec) && s[:len(spec)] == spec && s[len(spec)] == ':') {
			return true
		}
	}
	return false
}

// Item is one record of the repository.
type Item struct {
	// Identifier is the item's OAI identifier, e.g.
	// "oai:strata.example.org:dig2024/finds/17".
	Identifier string
	Datestamp  time.Time
	// Sets are the set specs the item belongs to.
	Sets    []string
	Deleted bool
	// Position is the item's place in List's order (opaque to the handler;
	// it is what Query.After takes).
	Position string
	// Formats are the prefixes this item can be disseminated in; nil means
	// all of Repository.Formats.
	Formats []string
	// Metadata writes the content of the metadata element in the format
	// prefix: one root element declaring its namespace (and
	// xsi:schemaLocation). It is not called for deleted items. The handler
	// checks that the output is well-formed XML with one root element.
	Metadata func(w io.Writer, prefix string) error
}

// has reports whether the item can be disseminated in prefix.
func (it Item) has(prefix string) bool {
	if it.Formats == nil {
		return true
	}
	for _, p := range it.Formats {
		if p == prefix {
			return true
		}
	}
	return false
}

// Options tune the handler.
type Options struct {
	// PageSize is the most records or headers per ListRecords or
	// ListIdentifiers response (default 100).
	PageSize int
	// Now gives responseDate (default time.Now); tests set it.
	Now func() time.Time
	// TokenKey signs resumption tokens with HMAC-SHA256 so a harvester
	// cannot forge or alter one. Pass a per-application secret. When empty,
	// a fixed key is used: tokens still detect corruption, not forgery.
	TokenKey []byte
}
