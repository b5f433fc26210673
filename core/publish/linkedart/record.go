package linkedart

// Kind is what a published table's records are, as the admin mapped it.
type Kind string

// The kinds a table can be mapped to.
const (
	KindUnit   Kind = "stratigraphic_unit"
	KindFind   Kind = "find"
	KindSample Kind = "sample"
	KindBurial Kind = "burial"
	KindSite   Kind = "site"
	KindOther  Kind = ""
)

// Term is a vocabulary term. ID is an absolute IRI, usually a Getty AAT URI
// such as http://vocab.getty.edu/aat/300010358; it may be empty, in which case
// the term gets an IRI under Record.VocabBase made from its label.
type Term struct {
	ID    string
	Label string
}

// Field is one public field of a record that has no dedicated place in the
// model. A field whose Term is known (a vocabulary value) becomes a
// classification of the record; any other becomes a statement.
type Field struct {
	Name  string // column name; with Record.Table it makes the field's IRI
	Label string // the field's label as the admin wrote it
	Value any    // string, int64, float64 or bool; nil or "" is left out
	Term  *Term  // the vocabulary term of Value, when the field is a vocabulary
}

// Dimension is a measurement of the record (height, weight, thickness...).
type Dimension struct {
	Type  Term
	Value float64
	Unit  Term
}

// Period is when the thing was produced (for a stratigraphic unit: formed).
// Years are astronomical: 0 is 1 BC, -500 is 501 BC. A nil Begin or End is
// unknown.
type Period struct {
	Label     string
	Begin     *int
	End       *int
	PeriodURI string // a period gazetteer entry (e.g. PeriodO), if any
}

// Relation is a physical (stratigraphic) relation from the record to another
// record. Type is an open key ("above", "below", "same", "cuts", "cut_by",
// "fills", "filled_by", "abuts", "bonds", or any other); TypeLabel is its
// human label (Type when empty); TypeURI, when set, is the IRI of the relation
// type, otherwise it is VocabBase + "relation/" + Type.
type Relation struct {
	Type        string
	TypeLabel   string
	TypeURI     string
	TargetURI   string
	TargetLabel string
}

// Range is one calibrated interval, in astronomical years (From <= To), with
// the probability of the range it belongs to (0.683 or 0.954).
type Range struct {
	From, To    int
	Probability float64
}

// C14 is a radiocarbon determination.
type C14 struct {
	LabCode    string
	BP         int
	Error      int
	Material   string
	Calibrated []Range
	Curve      string
}

// Ref is a reference to another published resource. Kind tells what the
// target is, which decides the property used for PartOf (a site becomes the
// place where the thing was found; anything else the object it is part of).
type Ref struct {
	URI   string
	Label string
	Kind  Kind
}

// Record is one published record in a neutral form. Everything in it is
// public: the caller has already dropped private fields and records.
type Record struct {
	URI            string // stable absolute URI of the record
	Kind           Kind
	Classification *Term // the admin's term for the kind
	Label          string
	Identifier     string // the record's id field value
	Table          string // table name; part of field IRIs
	TableLabel     string
	TableURI       string // when set, the record is member_of a Set with this URI and TableLabel
	// VocabBase is the absolute base IRI (ending in "/" or "#") under which
	// Strata's own terms get IRIs: field types, relation types, terms without
	// an ID, the radiocarbon vocabulary. Required as soon as one is needed.
	VocabBase   string
	Fields      []Field
	Material    []Term
	Dimensions  []Dimension
	Production  *Period
	Relations   []Relation
	Radiocarbon []C14
	PartOf      []Ref
	Images      []Ref  // IIIF Presentation manifest URIs
	Homepage    string // the landing page URL
	Licence     string // licence URI of the record's data
}
