package pluginsdk

import (
	"encoding/json"
	"net/http"
	"time"
)

// Manifest says what a plugin adds to the server. The server reads it once
// when the plugin starts (the Describe call) and mounts routes, operators
// and sections from it; Validate lists the rules.
type Manifest struct {
	// Name identifies the plugin on the instance: a lower-case letter, then
	// 1 to 30 lower-case letters, digits or underscores. It prefixes the
	// plugin's system tables (sys_<name>_<table>).
	Name string
	// Version is the plugin's own semantic version, e.g. "1.2.0".
	Version string
	// ProtocolVersion is the protocol the plugin speaks; leave it zero and
	// the SDK sets ProtocolVersion.
	ProtocolVersion uint32
	Description     string
	Features        []Feature
	Routes          []Route
	Operators       []Operator
	Sections        []Section
	SystemTables    []SystemTable
	// SettingsSchema is the JSON schema of the plugin's instance settings
	// (given to Configure), for the admin interface; optional.
	SettingsSchema json.RawMessage
	// MinServerProtocol is the lowest server protocol version the plugin
	// needs (0: any); an older server refuses the plugin and says so.
	MinServerProtocol uint32
	// Messages is the plugin's own small catalogue of the strings its
	// sections and routes' answers show that are not labels (units such
	// as "cal BP", the names of body regions), by key, each in one or more
	// languages: clients show the current language's text, else the
	// DefaultLanguage one, else the key. Keys are a lower-case letter,
	// then lower-case letters, digits, '_', '.' or '-'; every message has
	// a DefaultLanguage text. Added in SDK v0.5.0.
	Messages map[string]Labels
	// SectionLabels translates the Label of each section, by section
	// name (declared here so that Section stays comparable).
	SectionLabels map[string]Labels
}

// DefaultLanguage is the language of the Label fields of a manifest
// (feature, column, child table and section labels) and of each
// message's fallback text.
const DefaultLanguage = "en"

// Labels are a text's translations by language: BCP 47 tags in their
// canonical case, a language subtag then optionally a script and a
// region, e.g. "it", "pt-BR", "sr-Latn" (Validate refuses "IT", "it_IT",
// "italian"). Beside a Label they add other languages; a language a
// plugin does not declare falls back to the Label, so a plugin built
// before SDK v0.5.0, without any, still shows its labels in every
// language. A DefaultLanguage entry, if given, must equal the Label.
type Labels map[string]string

// Feature is something an admin activates per table with
// POST /config/table/{tb}/{feature}: columns added to the table, a child
// table <tb>_<suffix> linked by id_link, or both (but a feature with hooks
// has one or the other). Deactivation keeps the columns, the child table
// and their data; reactivation brings them back.
type Feature struct {
	Name    string   // e.g. "munsell"; the activation path segment
	Aliases []string // other names accepted in the activation path, e.g. "fuzzy-date"
	Label   string
	Labels  Labels // Label in other languages, e.g. {"it": "Datazioni al radiocarbonio"}
	// ColumnLabels and ColumnHelp translate the Label and Help of the
	// feature's columns and of its child table's columns, by column name:
	// {"lab_code": {"it": "Codice di laboratorio"}}.
	ColumnLabels map[string]Labels
	ColumnHelp   map[string]Labels
	Columns      []Column    // added to the activated table
	Child        *ChildTable // optional child table
	// Computed columns (of Columns or of the child table) are filled by the
	// BeforeSave hook: values the client sends for them are ignored (the
	// server marks them read-only when it adds them) and the hook's value
	// is written, though clients cannot write it. The hook is not sent
	// them: it computes them from the other columns.
	Computed []string
	// BeforeSave and AfterSave ask for the hooks for rows of this feature
	// (the plugin must implement BeforeSaver / AfterSaver).
	BeforeSave bool
	AfterSave  bool
	// Required: while the plugin is down, saves touching this feature are
	// refused (503 plugin_unavailable) instead of skipping the hooks. Only
	// meaningful with a hook.
	Required bool
	// SchemaFlag is a key set to true in the full record's schema on tables
	// where the feature is active, e.g. "has_munsell".
	SchemaFlag string
	// DependsOn names fields of the activated table outside the feature
	// (a columns feature) that its hooks read: an update sending one of
	// them calls the hooks as a change of the feature's own columns does,
	// and Row.Record holds them. A name the table lacks is simply absent
	// from Record.
	DependsOn []string
}

// Column is a column added to a table, a child table or a system table.
// The constructors (TextField, IntField, FloatField, DateField, BoolField,
// LongTextField, LinkOutField) make the usual ones in one call.
type Column struct {
	Name  string
	Label string
	Type  FieldType // one of FieldTypes: text, long_text, md, select, combo_select, multi_select, date, boolean, slider, link_to, link_out
	// DBType is the storage, one of DBTypes: text, int, float, date, bool.
	// Validate refuses a storage the field type cannot hold (a boolean
	// field stored as a date).
	DBType DBType
	// Readonly: clients cannot write the column (what they send for it
	// is ignored), and neither can a BeforeSave hook (its value for the
	// column is dropped too). Only the field's default value on insert
	// fills it. A column the plugin fills belongs in Feature.Computed
	// instead, which makes it read-only to clients but written from the
	// hook's answer.
	Readonly bool
	Help     string
	// A column's Label and Help in other languages are declared beside
	// it, in Feature.ColumnLabels and Feature.ColumnHelp, so that Column
	// stays comparable as it was before SDK v0.5.0.
}

// ChildTable is a feature's child table, named <table>_<Suffix>; besides
// Columns it has id and id_link (the parent record).
type ChildTable struct {
	Suffix  string
	Label   string
	Labels  Labels // Label in other languages
	Columns []Column
}

// Access values of Route.Access: who may call a route. The server checks
// it (per table where the route names one) before the plugin sees the call.
const (
	AccessPublic     = "public"      // anyone, no credential
	AccessEnter      = "enter"       // any signed-in account
	AccessRead       = "read"        // readers and up
	AccessAddNew     = "add_new"     // may create records
	AccessEdit       = "edit"        // may edit records
	AccessAdmin      = "admin"       // application admins
	AccessSuperAdmin = "super_admin" // super admins
)

// Route is an HTTP route the server mounts at /<app>/api<Path>, behind the
// same authentication and privilege checks as its own routes, and forwards
// to Handler.
type Route struct {
	Method string // GET, POST, PUT, PATCH or DELETE
	// Path is under /<app>/api, in the server router's syntax: static
	// segments and ":name" parameters (read with Param), with an optional
	// final "*name" catch-all. The first segment must be static, e.g.
	// "/munsell/parse" or "/chrono/related/:tb/:id".
	Path   string
	Access string // one of the Access constants
	// Timeout of one call; 0 is the server default (30 s).
	Timeout time.Duration
	// BodyLimit caps the request body in bytes; 0 is the server default.
	// At most MaxBodyLimit.
	BodyLimit int64
	// Job runs each call as a job of the server's job system (not for
	// GET): the request carries the job's id (JobID), the handler reports
	// progress with Host.JobProgress, and the client gets the answer when
	// it comes within a short wait, else 202 with the job to follow at
	// GET /jobs/{id} (whose result holds the answer). Without a job system
	// the server calls the route as any other.
	Job bool
	// TableParam is the query parameter naming the table the route works
	// on, as in /munsell/summary?tb=finds; empty: "tb". The server checks
	// the caller's level on that table exactly as for a ":tb" path
	// parameter (per-table privileges: a caller denied the table gets 403
	// before the plugin is called, one with an override is held to it;
	// the row subset applies to Host.QueryRecords as the actor, as
	// always). A repeated parameter or a comma-separated list names
	// several tables: each is checked, and Actor.Privilege is the least
	// of the levels. A :tb path parameter is checked too when the route
	// has both.
	TableParam string
	// Handler serves the request. The request carries the method, the path
	// after /<app>/api, the query, selected headers (never Authorization)
	// and the body; ActorFrom and Param read the caller and path parameters.
	Handler http.Handler
}

// Operator is a filter operator, used as {"<field>": {"<Name>": <operand>}}
// in any filter of a table where Feature is active, or keyed by the
// plugin's name, {"<plugin>": {"<Name>": <operand>}}, which suits an
// operator about the whole record (FilterCall.Field is then the plugin's
// name); ResolveFilter turns it into an ordinary filter. Under a field it
// does not serve it is refused (400 invalid_filter, naming the operator,
// the field and the keys it serves).
type Operator struct {
	Name    string   // "_" then lower-case letters, digits or underscores, e.g. "_munsell_hue"
	Fields  []string // the fields it may be used under (empty: any); the plugin's name always
	Feature string   // the feature that must be active on the table (empty: any table)
}

// Section is a key added to full records (GET /record/{tb}/{id}) of tables
// where Feature is active, filled by EnrichRecords.
type Section struct {
	Name    string
	Feature string // empty: every table
	// Label is the section's title, for clients that show it (optional);
	// Manifest.SectionLabels has it in other languages.
	Label string
	// Rows, when the section is made only of rows of one of the plugin's
	// system tables, names them: the server then looks for the record's
	// rows in the read's own round trip and answers Rows.Empty for a record
	// without any, with no call to EnrichRecords. A section of every table
	// costs most reads nothing that way.
	Rows *SectionRows
}

// SectionRows says where a section's rows are: the system table Table,
// whose column TableColumn holds the record's table name and IDColumn its
// id. Empty is the section's value for a record without rows, exactly as
// EnrichRecords would give it (nil: null). Declare an index on
// (TableColumn, IDColumn) in the system table, so the look-up stays a
// seek however many rows the table holds.
type SectionRows struct {
	Table       string
	TableColumn string
	IDColumn    string
	Empty       any
}

// SystemTable is a table of the plugin's own, created by the server in
// every application as sys_<plugin>_<Name> with an id column besides
// Columns, and reached with Host.ReadSystemRows / WriteSystemRows.
// Indexes are created with it (and added to a table an older version of
// the plugin made), each a list of columns in order, e.g.
// {{"tb", "record_id"}} for rows read by record.
type SystemTable struct {
	Name    string
	Columns []Column
	Indexes [][]string
}

// MaxBodyLimit is the largest Route.BodyLimit. A request crosses gRPC as
// one message, and MaxMessageSize leaves room for the rest of it.
const MaxBodyLimit = 32 << 20

// MaxMessageSize is the gRPC message size both sides accept (the gRPC
// default, 4 MiB, is smaller than a large request body or a page of
// records). The server dials plugins and serves the Host service with it.
const MaxMessageSize = 40 << 20

// withDefaults returns m as sent on the wire: the protocol version set.
func (m Manifest) withDefaults() Manifest {
	if m.ProtocolVersion == 0 {
		m.ProtocolVersion = ProtocolVersion
	}
	return m
}
