package plugintest

import (
	"bytes"
	"context"
	"crypto/cipher"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// maxQueryLimit is the server's cap on rows per QueryRecords call.
const maxQueryLimit = 10000

// FakeHost is an in-memory Host service: records per application and
// table (as the test seeds them), the plugin's system tables, application
// settings, and the log lines and queries the plugin sent. Filters are
// evaluated by Match (the operators of the filter language, without nested
// conditions). As the server, it answers a query as its actor may read
// (SetRights: a denied table, a row subset; the plugin's own queries read
// everything) and as the table's active features show it (SetFeatures);
// Queries shows which actor the plugin passed. Safe for concurrent use.
type FakeHost struct {
	pluginv1.UnimplementedHostServer

	mu       sync.Mutex
	records  map[string]map[string][]map[string]any // app → table → rows
	system   map[string]map[string]*systemTable     // app → table name → rows
	settings map[string]map[string]string
	logs     []LogLine
	queries  []Query
	manifest *pluginsdk.Manifest
	catalogs map[string]pluginsdk.Catalog
	gcm      cipher.AEAD // Seal and Open's key, made on first use

	jobReports    []JobReport
	cancelledJobs map[string]bool
	geodata       []Geodata // AddGeodata calls (fakegeodata.go)

	rights   map[string]map[string]Rights   // actor → table → rights (fakerights.go)
	features map[string]map[string][]string // app → table → active features

	updates []RecordUpdate // UpdateRecords calls (fakeupdate.go)

	strat        map[string]map[string]*fakeStrat // app → table → matrix (fakestrat.go)
	featureChild map[string]string                // app, table, feature → child table (SetFeatureRows)
}

type systemTable struct {
	rows   map[int64]map[string]any
	nextID int64
}

// LogLine is one Host.Log call.
type LogLine struct {
	Level   string
	Message string
	Fields  map[string]string
}

// Query is one QueryRecords call, as the plugin sent it.
type Query struct {
	App, Table string
	Filter     map[string]any // nil for none
	Columns    []string
	Limit      int
	Offset     int
	SortField  string
	SortDir    string
	Actor      *pluginsdk.Actor // nil: the plugin's own rights
}

// NewFakeHost returns an empty fake host.
func NewFakeHost() *FakeHost {
	return &FakeHost{
		records:  map[string]map[string][]map[string]any{},
		system:   map[string]map[string]*systemTable{},
		settings: map[string]map[string]string{},
	}
}

// setManifest lets the fake refuse system tables and columns the plugin
// did not declare, as the server does.
func (h *FakeHost) setManifest(m pluginsdk.Manifest) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.manifest = &m
}

// normalise gives seeded values the form they have after crossing the
// wire (numbers as json.Number), so filters compare like the real thing.
func normalise(row map[string]any) (map[string]any, error) {
	b, err := json.Marshal(row)
	if err != nil {
		return nil, err
	}
	return pluginsdk.DecodeObject(b)
}

// SetRecords replaces the records of a table. Rows without an "id" get
// 1, 2, … in order. It panics on rows that do not encode to JSON (a test
// bug).
func (h *FakeHost) SetRecords(app, table string, rows ...map[string]any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		n, err := normalise(r)
		if err != nil {
			panic(fmt.Sprintf("plugintest: SetRecords row %d: %v", i, err))
		}
		if _, ok := n["id"]; !ok {
			n["id"] = json.Number(fmt.Sprint(i + 1))
		}
		out[i] = n
	}
	if h.records[app] == nil {
		h.records[app] = map[string][]map[string]any{}
	}
	h.records[app][table] = out
}

// StoredRow is row id of a seeded table (SetRecords), a copy; nil when
// there is none.
func (h *FakeHost) StoredRow(app, table string, id int64) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records[app][table] {
		if n, ok := pluginsdk.Int(r["id"]); ok && n == id {
			return maps.Clone(r)
		}
	}
	return nil
}

// SetAppSettings replaces an application's settings.
func (h *FakeHost) SetAppSettings(app string, settings map[string]string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.settings[app] = maps.Clone(settings)
}

// SetSystemRows replaces the rows of a system table (the manifest's name).
// Rows without an "id" get the next free one.
func (h *FakeHost) SetSystemRows(app, table string, rows ...map[string]any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := &systemTable{rows: map[int64]map[string]any{}}
	for i, r := range rows {
		n, err := normalise(r)
		if err != nil {
			panic(fmt.Sprintf("plugintest: SetSystemRows row %d: %v", i, err))
		}
		id, ok := pluginsdk.Int(n["id"])
		if !ok {
			id = t.nextID + 1
			n["id"] = json.Number(fmt.Sprint(id))
		}
		t.rows[id] = n
		t.nextID = max(t.nextID, id)
	}
	h.table(app, table, true)
	h.system[app][table] = t
}

// SystemRows returns the rows of a system table in id order (copies).
func (h *FakeHost) SystemRows(app, table string) []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.table(app, table, false)
	if t == nil {
		return nil
	}
	return t.sorted()
}

// Logs returns the lines the plugin logged through Host.Log.
func (h *FakeHost) Logs() []LogLine {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.logs)
}

// Queries returns the QueryRecords calls the plugin made.
func (h *FakeHost) Queries() []Query {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.queries)
}

func (h *FakeHost) table(app, name string, create bool) *systemTable {
	if h.system[app] == nil {
		if !create {
			return nil
		}
		h.system[app] = map[string]*systemTable{}
	}
	t := h.system[app][name]
	if t == nil && create {
		t = &systemTable{rows: map[int64]map[string]any{}}
		h.system[app][name] = t
	}
	return t
}

func (t *systemTable) sorted() []map[string]any {
	ids := slices.Sorted(maps.Keys(t.rows))
	out := make([]map[string]any, len(ids))
	for i, id := range ids {
		out[i] = maps.Clone(t.rows[id])
	}
	return out
}

// declared returns the columns of a declared system table; ok is true
// when the manifest is unknown (the fake then accepts anything).
func (h *FakeHost) declared(table string) (cols []string, ok bool) {
	if h.manifest == nil {
		return nil, true
	}
	for _, t := range h.manifest.SystemTables {
		if t.Name == table {
			for _, c := range t.Columns {
				cols = append(cols, c.Name)
			}
			return cols, true
		}
	}
	return nil, false
}

func decodeFilter(b []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	f, err := pluginsdk.DecodeObject(b)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "invalid_filter: %v", err)
	}
	return f, nil
}

func encodeRows(rows []map[string]any) ([]byte, error) {
	if rows == nil {
		rows = []map[string]any{}
	}
	return json.Marshal(rows)
}

// QueryRecords implements the Host service.
func (h *FakeHost) QueryRecords(_ context.Context, req *pluginv1.QueryRequest) (*pluginv1.QueryResponse, error) {
	filter, err := decodeFilter(req.GetFilter())
	if err != nil {
		return nil, err
	}
	if req.GetLimit() < 0 || req.GetLimit() > maxQueryLimit || req.GetOffset() < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "limit is 0 to %d and offset not negative", maxQueryLimit)
	}
	if d := strings.ToLower(req.GetSortDir()); d != "" && d != "asc" && d != "desc" {
		return nil, status.Errorf(codes.InvalidArgument, "sort_dir %q is asc or desc", req.GetSortDir())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queries = append(h.queries, Query{
		App: req.GetApp(), Table: req.GetTable(), Filter: filter, Columns: req.GetColumns(),
		Limit: int(req.GetLimit()), Offset: int(req.GetOffset()), SortField: req.GetSortField(),
		SortDir: req.GetSortDir(), Actor: actorFromProto(req.GetActor()),
	})
	hidden, parent, err := h.tableView(req.GetApp(), req.GetTable())
	if err != nil {
		return nil, err
	}
	// The server's order: the table, the actor's rights on it, then the
	// columns and the filter.
	var subset map[string]any
	if a := actorFromProto(req.GetActor()); a != nil && (a.UserID != 0 || a.APIKeyID != 0) {
		level, sub := h.grant(*a, req.GetTable(), parent)
		if !readable(level) {
			return nil, hostError(codes.PermissionDenied, "not_enough_privilege", "the actor may not read this table")
		}
		subset = sub
	}
	for _, c := range append(slices.Clone(req.GetColumns()), filterFields(filter)...) {
		if hidden[c] {
			return nil, hostError(codes.InvalidArgument, "invalid_field", "unknown field %q (its feature is not active on %s)", c, req.GetTable())
		}
	}
	// A table the test did not seed has no records (rather than being an
	// error), so that a plugin querying the host in a hook still runs in
	// Conformance; Queries shows what was asked.
	rows := h.records[req.GetApp()][req.GetTable()]
	var matched []map[string]any
	for _, r := range rows {
		ok, err := Match(filter, r)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "invalid_filter: %v", err)
		}
		if ok && subset != nil {
			if ok, err = Match(subset, r); err != nil {
				return nil, status.Errorf(codes.Internal, "the row subset: %v", err)
			}
		}
		if ok {
			if len(hidden) > 0 {
				r = maps.Clone(r)
				for c := range hidden {
					delete(r, c)
				}
			}
			matched = append(matched, r)
		}
	}
	sortRows(matched, req.GetSortField(), strings.EqualFold(req.GetSortDir(), "desc"))
	total := len(matched)
	matched = matched[min(int(req.GetOffset()), total):]
	limit := int(req.GetLimit())
	if limit == 0 {
		limit = maxQueryLimit
	}
	matched = matched[:min(limit, len(matched))]
	out := make([]map[string]any, len(matched))
	for i, r := range matched {
		if cols := req.GetColumns(); len(cols) > 0 {
			out[i] = map[string]any{"id": r["id"]}
			for _, c := range cols {
				if v, ok := r[c]; ok {
					out[i][c] = v
				}
			}
		} else {
			out[i] = maps.Clone(r)
		}
	}
	b, err := encodeRows(out)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &pluginv1.QueryResponse{Total: int64(total), Rows: b}, nil
}

func sortRows(rows []map[string]any, field string, desc bool) {
	if field == "" {
		field = "id"
	}
	sort.SliceStable(rows, func(i, j int) bool {
		c := compareValues(rows[i][field], rows[j][field])
		if desc {
			return c > 0
		}
		return c < 0
	})
}

// ReadSystemRows implements the Host service.
func (h *FakeHost) ReadSystemRows(_ context.Context, req *pluginv1.SystemReadRequest) (*pluginv1.SystemRows, error) {
	filter, err := decodeFilter(req.GetFilter())
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.declared(req.GetTable()); !ok {
		return nil, status.Errorf(codes.NotFound, "system table %q is not in the plugin's manifest", req.GetTable())
	}
	var out []map[string]any
	if t := h.table(req.GetApp(), req.GetTable(), false); t != nil {
		for _, r := range t.sorted() {
			ok, err := Match(filter, r)
			if err != nil {
				return nil, status.Errorf(codes.InvalidArgument, "invalid_filter: %v", err)
			}
			if ok {
				out = append(out, r)
			}
		}
	}
	if l := int(req.GetLimit()); l > 0 && len(out) > l {
		out = out[:l]
	}
	b, err := encodeRows(out)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &pluginv1.SystemRows{Rows: b}, nil
}

// WriteSystemRows implements the Host service: all or nothing, like the
// server's transaction.
func (h *FakeHost) WriteSystemRows(_ context.Context, req *pluginv1.SystemWriteRequest) (*pluginv1.SystemWriteResponse, error) {
	var upsert []map[string]any
	if len(bytes.TrimSpace(req.GetUpsert())) > 0 {
		dec := json.NewDecoder(bytes.NewReader(req.GetUpsert()))
		dec.UseNumber()
		if err := dec.Decode(&upsert); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "upsert is not a JSON array of objects: %v", err)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	cols, ok := h.declared(req.GetTable())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "system table %q is not in the plugin's manifest", req.GetTable())
	}
	t := h.table(req.GetApp(), req.GetTable(), true)
	// Check everything before changing anything.
	for i, r := range upsert {
		for k := range r {
			if k != "id" && cols != nil && !slices.Contains(cols, k) {
				return nil, status.Errorf(codes.InvalidArgument, "row %d: %q is not a column of system table %q", i, k, req.GetTable())
			}
		}
		if v, has := r["id"]; has {
			id, ok := pluginsdk.Int(v)
			if !ok || t.rows[id] == nil {
				return nil, status.Errorf(codes.NotFound, "row %d: no row with id %v in system table %q", i, v, req.GetTable())
			}
		}
	}
	ids := make([]int64, len(upsert))
	for i, r := range upsert {
		if v, has := r["id"]; has {
			id, _ := pluginsdk.Int(v)
			maps.Copy(t.rows[id], r)
			t.rows[id]["id"] = json.Number(fmt.Sprint(id))
			ids[i] = id
			continue
		}
		t.nextID++
		row := maps.Clone(r)
		row["id"] = json.Number(fmt.Sprint(t.nextID))
		t.rows[t.nextID] = row
		ids[i] = t.nextID
	}
	for _, id := range req.GetDeleteIds() {
		delete(t.rows, id)
	}
	return &pluginv1.SystemWriteResponse{Ids: ids}, nil
}

// AppSettings implements the Host service.
func (h *FakeHost) AppSettings(_ context.Context, req *pluginv1.AppSettingsRequest) (*pluginv1.AppSettingsResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &pluginv1.AppSettingsResponse{Settings: maps.Clone(h.settings[req.GetApp()])}, nil
}

// Log implements the Host service.
func (h *FakeHost) Log(_ context.Context, req *pluginv1.LogRequest) (*pluginv1.LogResponse, error) {
	switch req.GetLevel() {
	case "debug", "info", "warn", "error":
	default:
		return nil, status.Errorf(codes.InvalidArgument, "log level %q is debug, info, warn or error", req.GetLevel())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, LogLine{Level: req.GetLevel(), Message: req.GetMessage(), Fields: maps.Clone(req.GetFields())})
	return &pluginv1.LogResponse{}, nil
}

// SetCatalog sets what Host.Catalog answers for app.
func (h *FakeHost) SetCatalog(app string, cat pluginsdk.Catalog) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.catalogs == nil {
		h.catalogs = map[string]pluginsdk.Catalog{}
	}
	h.catalogs[app] = cat
}

// Catalog implements the Host service: the catalog set with SetCatalog, or
// an empty one.
func (h *FakeHost) Catalog(_ context.Context, req *pluginv1.CatalogRequest) (*pluginv1.CatalogResponse, error) {
	h.mu.Lock()
	cat := h.catalogs[req.GetApp()]
	h.mu.Unlock()
	if cat.Tables == nil {
		cat.Tables = []pluginsdk.CatalogTable{}
	}
	raw, err := json.Marshal(cat)
	if err != nil {
		return nil, err
	}
	return &pluginv1.CatalogResponse{Catalog: raw}, nil
}
