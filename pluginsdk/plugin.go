package pluginsdk

import (
	"context"
	"encoding/json"
)

// Plugin is what a plugin binary serves: Serve(p) answers the server's
// calls with it. Manifest is called once, when the plugin starts; the other
// capabilities are the optional interfaces below, and the manifest decides
// which of them the server uses (a feature with BeforeSave set needs a
// BeforeSaver, an operator needs a FilterResolver, a section a
// SectionProvider). Every method may be called concurrently: the server
// sends calls for many requests and applications over one connection.
type Plugin interface {
	Manifest() Manifest
}

// Configurer is told how to reach the server. Configure is called once after
// the plugin starts (and again after every restart, in the new process);
// host stays valid for the life of the process, so keep it. settings is the
// JSON object of instance-level settings for this plugin (nil when the
// server has none); it follows the manifest's SettingsSchema. An error stops
// the server from using the plugin.
type Configurer interface {
	Configure(ctx context.Context, host Host, settings json.RawMessage) error
}

// BeforeSaver checks and completes the rows of a feature before they are
// written (features with BeforeSave set); the server calls it before it
// opens its transaction. It returns one RowResult per row of call.Rows, in
// the same order, or nil when every row is fine as sent. A row with Errors
// stops the whole save (nothing is written) and the errors reach the
// client in 400 validation_failed. Bad input is always reported as
// FieldErrors: a returned error means the plugin itself failed, and the
// server treats it like a plugin that is down (a Required feature's save
// is refused with 503 plugin_unavailable; otherwise the save goes on
// without the hook).
type BeforeSaver interface {
	BeforeSave(ctx context.Context, call SaveCall) ([]RowResult, error)
}

// AfterSaver is told about rows that were written (features with AfterSave
// set), after the server's transaction committed, with the record's id.
// The save has already happened: an error is logged by the server, it does
// not undo anything.
type AfterSaver interface {
	AfterSave(ctx context.Context, call SaveCall) error
}

// FilterResolver turns a use of one of the manifest's filter operators into
// an ordinary filter or a set of record ids. Return an *Error (for instance
// Errorf("invalid_filter", ...)) for an operand the client got wrong: it
// reaches the client as a 400 with that code.
type FilterResolver interface {
	ResolveFilter(ctx context.Context, call FilterCall) (FilterResult, error)
}

// SectionProvider adds the manifest's record sections to full records. It
// gets a batch of record ids and returns the section's value per id (any
// value that encodes to JSON); ids left out get no section.
type SectionProvider interface {
	EnrichRecords(ctx context.Context, call EnrichCall) (map[int64]any, error)
}

// Privilege levels of Actor.Privilege: a lower number means more rights.
// They mirror the server's levels (SPEC §2.7).
const (
	PrivilegeSuperAdmin = 1
	PrivilegeAdmin      = 10
	PrivilegeWriter     = 20
	PrivilegeSelfWriter = 25
	PrivilegeReader     = 30
)

// Actor is who caused a call: a user or an API key, in one application.
type Actor struct {
	App      string // the application (tenant) the call is about
	UserID   int64  // 0 for an API key
	APIKeyID int64  // 0 for a user
	// Privilege is the effective level for the call's table (see the
	// Privilege constants); the server has already checked the route's or
	// hook's access, so this is for finer decisions of the plugin's own.
	Privilege int
	Name      string
	Email     string
}

// SaveCall is a batch of rows of one feature on one table, for BeforeSave
// and AfterSave.
type SaveCall struct {
	Feature  string // the manifest feature
	Table    string // the table the feature is active on
	RowTable string // where the rows live: Table itself, or the child table <Table>_<suffix>
	Rows     []Row
	Actor    Actor
}

// Row is one row of a SaveCall. For BeforeSave, Values holds the feature's
// columns that the client sent in this save (for an update, only those it
// changes; a new row lists what was sent, possibly nothing), never the
// computed ones, which the hook sets. For AfterSave, the values as written.
//
// Record (BeforeSave) is the row as it will be once saved: the stored row
// overlaid with what the client sent (for a columns feature, the
// feature's columns and its DependsOn fields, with id; for a child row,
// the stored child row), or what was sent for a new row. It is exactly
// what is stored when the hook's result is written: the server checks,
// under the row's lock in the save's transaction, that the record did not
// change since it read it, and otherwise calls the hook again with a
// fresh Record. Complete partial updates from Record, never from a read
// of your own (Host.QueryRecords runs outside the save and may see another
// save's row). Record is nil for AfterSave.
//
// Values are decoded from JSON with json.Decoder.UseNumber: a number is a
// json.Number (exact, for ids and large integers), a string a string, true
// or false a bool, null a nil, arrays []any and objects map[string]any. Use
// Int and Float to read numbers whatever form the client used.
type Row struct {
	ID       int64 // 0 for a new row
	ParentID int64 // for a child table row: the record it belongs to (id_link); 0 while that record is being created
	Values   map[string]any
	Record   map[string]any
}

// RowResult is the outcome of BeforeSave for one row. Values are the values
// to write: return the row's Values map, patched (normalised text, computed
// columns); a nil Values means "write the row as sent". Values may only
// name the feature's declared columns: the server ignores or refuses other
// keys, and plugintest.Conformance reports them. Errors, when not empty,
// stop the save.
type RowResult struct {
	Values map[string]any
	Errors []FieldError
}

// FieldError is one validation failure of a row. The server reports it to
// the client inside 400 validation_failed.
type FieldError struct {
	Field   string // the column, one of the feature's
	Rule    string // a short stable code, e.g. "format", "range", "required"
	Message string // for people, in English
	Path    string // inside a JSON value, e.g. "individuals[0].bones.femur_left"; usually empty
}

// FilterCall is one use of a plugin filter operator in a filter, for
// instance {"munsell_colour": {"_munsell_hue": "10YR"}}.
type FilterCall struct {
	Operator string // e.g. "_munsell_hue"
	Table    string
	// Field is the key the operator was used under: one of the operator's
	// Fields, any field when it has none, or the plugin's own name when
	// the client addressed the operator by it ({"<plugin>": {"_op": v}},
	// filter[<plugin>][_op]=v), which every operator accepts: then no
	// column of that name is meant, whatever the table has.
	Field string
	// Value is the operand exactly as the client sent it; unmarshal it into
	// the type the operator takes.
	Value json.RawMessage
	Actor Actor
}

// FilterResult is what an operator stands for: either Filter, a filter
// object of the filter language on the same table (any value that encodes to
// a JSON object, e.g. map[string]any{"f": map[string]any{"_eq": 1}}), or,
// with UseIDs set, the ids of the matching rows (an empty IDs then matches
// nothing).
type FilterResult struct {
	Filter any
	IDs    []int64
	UseIDs bool
}

// EnrichCall asks for one record section for a batch of records of a table.
type EnrichCall struct {
	Section string
	Table   string
	IDs     []int64
	Actor   Actor
}
