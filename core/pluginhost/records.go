package pluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// feature is a table feature of a loaded plugin.
type feature struct {
	plugin *plugin
	spec   *pluginv1.TableFeature
}

// Feature is a table feature as activation needs it.
type Feature struct {
	Plugin string
	Name   string
	// Running: the plugin can be called now.
	Running bool
	Spec    schema.FeatureSpec
}

// Feature finds a loaded plugin's feature by name or alias
// ("fuzzy-date" → chronology).
func (m *Manager) Feature(nameOrAlias string) (Feature, bool) {
	if m == nil {
		return Feature{}, false
	}
	m.mu.RLock()
	f, ok := m.features[nameOrAlias]
	m.mu.RUnlock()
	if !ok {
		return Feature{}, false
	}
	_, err := f.plugin.client()
	return Feature{Plugin: f.plugin.name, Name: f.spec.GetName(), Running: err == nil, Spec: featureSpec(f.plugin.name, f.spec)}, true
}

// RunningSpec is what activating the feature named nameOrAlias applies,
// when its plugin is loaded and running now (a DBML import activates the
// features a table names); nil-safe.
func (m *Manager) RunningSpec(nameOrAlias string) (schema.FeatureSpec, bool) {
	f, ok := m.Feature(nameOrAlias)
	return f.Spec, ok && f.Running
}

// featureSpec is what activation applies for a manifest feature.
func featureSpec(pluginName string, f *pluginv1.TableFeature) schema.FeatureSpec {
	spec := schema.FeatureSpec{Plugin: pluginName, Name: f.GetName(), Columns: fieldDefs(f.GetColumns()),
		Computed: append([]string{}, f.GetComputed()...)}
	if ch := f.GetChild(); ch != nil {
		spec.Child = &schema.ChildSpec{Suffix: ch.GetSuffix(), Label: ch.GetLabel(), Columns: fieldDefs(ch.GetColumns())}
	}
	return spec
}

func fieldDefs(cols []*pluginv1.Column) []schema.FieldDef {
	out := make([]schema.FieldDef, 0, len(cols))
	for _, c := range cols {
		out = append(out, schema.FieldDef{Name: c.GetName(), Label: c.GetLabel(), Type: c.GetType(),
			DBType: c.GetDbType(), Readonly: c.GetReadonly(), Help: c.GetHelp()})
	}
	return out
}

// Extras are what plugins add to a records scope on one table.
type Extras struct {
	Features    []records.ActiveFeature
	Sections    []records.Section
	SchemaFlags map[string]bool
}

// ForTable returns the plugin features active on t (t.Features, kept on
// the visible catalog's tables too), the record sections of those
// features and their schema flags. A feature whose plugin is loaded but
// not running gets no hook (records refuses saves that need it); a
// feature whose plugin is not loaded at all is treated as required and
// down: nothing checks or computes its columns, so records refuses the
// saves that would touch them until the plugin is back or the feature is
// deactivated. Safe on a nil manager.
func (m *Manager) ForTable(t *schema.Table) Extras {
	var ex Extras
	names := make([]string, 0, len(t.Features))
	for name, st := range t.Features {
		if st.Active {
			names = append(names, name)
		}
	}
	sort.Strings(names) // hooks run in a stable order
	active := map[string]bool{}
	for _, name := range names {
		active[name] = true
		st := t.Features[name]
		var f *feature
		if m != nil {
			m.mu.RLock()
			f = m.features[name]
			m.mu.RUnlock()
		}
		if f == nil || f.spec.GetName() != name {
			af := records.ActiveFeature{Name: name, Plugin: st.Plugin, ChildTable: st.ChildTable, Required: true}
			for _, fld := range t.Fields {
				if fld.Feature == name {
					af.Columns = append(af.Columns, fld.Name)
				}
			}
			ex.Features = append(ex.Features, af)
			continue
		}
		af := records.ActiveFeature{Name: name, Plugin: f.plugin.name, ChildTable: st.ChildTable, Computed: f.spec.GetComputed(),
			Before: f.spec.GetBeforeSave(), After: f.spec.GetAfterSave(), Required: f.spec.GetRequired(),
			DependsOn: f.spec.GetDependsOn()}
		for _, c := range f.spec.GetColumns() {
			af.Columns = append(af.Columns, c.GetName())
		}
		if _, err := f.plugin.client(); err == nil && (af.Before || af.After) {
			af.Hook = hook{f.plugin}
		}
		ex.Features = append(ex.Features, af)
		if flag := f.spec.GetSchemaFlag(); flag != "" {
			if ex.SchemaFlags == nil {
				ex.SchemaFlags = map[string]bool{}
			}
			ex.SchemaFlags[flag] = true
		}
	}
	for _, p := range m.loaded() {
		_, err := p.client()
		for _, s := range p.manifest().GetSections() {
			if s.GetFeature() != "" && !active[s.GetFeature()] {
				continue
			}
			sec := records.Section{Name: s.GetName()}
			if err == nil {
				sec.Source = sectionSource{p}
				if r := s.GetRows(); r != nil {
					sec.Probe = sectionProbe{p: p, table: systemTableName(p.name, r.GetTable()),
						tableColumn: r.GetTableColumn(), idColumn: r.GetIdColumn(), empty: r.GetEmpty()}
				}
			}
			ex.Sections = append(ex.Sections, sec)
		}
	}
	return ex
}

// actorKey carries the caller into filter operators, whose Resolve gets
// only a context.
type actorKey struct{}

// WithActor returns ctx carrying the caller, for plugin filter operators
// rendered under it.
func WithActor(ctx context.Context, a *records.Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

func actorFrom(ctx context.Context) *records.Actor {
	a, _ := ctx.Value(actorKey{}).(*records.Actor)
	return a
}

func actorProto(a *records.Actor) *pluginv1.Actor {
	if a == nil {
		return nil
	}
	return &pluginv1.Actor{App: a.App, UserId: a.UserID, ApiKeyId: a.APIKeyID, Privilege: int32(a.Privilege),
		Name: a.Name, Email: a.Email}
}

// Operators are the loaded plugins' filter operators, for filter.Options.
// Nil on a nil manager (built-in operators only).
func (m *Manager) Operators() *filter.Registry {
	if m == nil {
		return nil
	}
	return m.ops
}

// operator adapts a manifest operator: it resolves only on tables where
// its feature is active, through the plugin, within CallTimeout.
func (p *plugin) operator(o *pluginv1.FilterOperator) filter.Operator {
	name, feat := o.GetName(), o.GetFeature()
	return filter.Operator{Name: name, Fields: o.GetFields(), Plugin: p.name, Resolve: func(ctx context.Context, call filter.OperatorCall) (filter.Resolution, error) {
		if feat != "" && !call.Table.Active(feat) {
			return filter.Resolution{}, filter.ErrInvalidFilter.With("detail",
				fmt.Sprintf("%s needs the %s feature, which is not active on %s", name, feat, call.Table.Name))
		}
		value, err := json.Marshal(call.Value)
		if err != nil {
			return filter.Resolution{}, filter.ErrInvalidFilter.With("detail", err.Error())
		}
		c, err := p.client()
		if err != nil {
			return filter.Resolution{}, err
		}
		ctx, cancel := context.WithTimeout(ctx, p.m.opts.CallTimeout)
		defer cancel()
		res, err := c.ResolveFilter(ctx, &pluginv1.FilterRequest{Operator: name, Table: call.Table.Name, Field: call.Field,
			Value: value, Actor: actorProto(actorFrom(ctx))})
		if err != nil {
			return filter.Resolution{}, p.callError("ResolveFilter "+name, err)
		}
		if res.GetUseIds() {
			return filter.Resolution{IDs: append([]int64{}, res.GetIds()...)}, nil
		}
		raw := bytes.TrimSpace(res.GetFilter())
		if len(raw) == 0 || raw[0] != '{' {
			return filter.Resolution{}, p.callError("ResolveFilter "+name, fmt.Errorf("neither a filter object nor ids"))
		}
		n, err := filter.ParseJSON(raw)
		if err != nil {
			p.m.log.Error("plugin operator resolved to an invalid filter", "plugin", p.name, "operator", name, "err", err)
			return filter.Resolution{}, ErrFailed.With("plugin", p.name).Wrap(err)
		}
		if n == nil {
			n = filter.And{} // {}: no condition
		}
		return filter.Resolution{Node: n}, nil
	}}
}

// hook is a running plugin's side of its features, for records.
type hook struct{ p *plugin }

func (h hook) saveRequest(call records.HookCall) (*pluginv1.SaveRequest, error) {
	req := &pluginv1.SaveRequest{Feature: call.Feature, Table: call.Table, RowTable: call.RowTable,
		Actor: actorProto(call.Actor), Rows: make([]*pluginv1.Row, len(call.Rows))}
	for i, r := range call.Rows {
		vals := r.Values
		if vals == nil {
			vals = map[string]any{}
		}
		b, err := json.Marshal(vals)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		req.Rows[i] = &pluginv1.Row{Id: r.ID, ParentId: r.ParentID, Values: b}
		if r.Record != nil {
			if req.Rows[i].Record, err = json.Marshal(r.Record); err != nil {
				return nil, fmt.Errorf("row %d record: %w", i, err)
			}
		}
	}
	return req, nil
}

// callAttrs name a hook call's rows in a log line: app, table, row table
// and ids (the parent records' for child rows), so a timeout can be traced
// to the records it left unchecked.
func callAttrs(call records.HookCall) []any {
	ids := make([]int64, 0, len(call.Rows))
	for _, r := range call.Rows {
		id := r.ID
		if r.ParentID != 0 {
			id = r.ParentID
		}
		ids = append(ids, id)
	}
	app := ""
	if call.Actor != nil {
		app = call.Actor.App
	}
	return []any{"app", app, "table", call.Table, "row_table", call.RowTable, "record_ids", ids}
}

// BeforeSave asks the plugin to check and complete the rows, within
// HookTimeout.
func (h hook) BeforeSave(ctx context.Context, call records.HookCall) ([]records.HookResult, error) {
	c, err := h.p.client()
	if err != nil {
		return nil, err
	}
	req, err := h.saveRequest(call)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, h.p.m.opts.HookTimeout)
	defer cancel()
	resp, err := c.BeforeSave(ctx, req)
	if err != nil {
		return nil, h.p.callError("BeforeSave "+call.Feature, err, callAttrs(call)...)
	}
	out := make([]records.HookResult, len(resp.GetRows()))
	for i, r := range resp.GetRows() {
		if len(bytes.TrimSpace(r.GetValues())) > 0 {
			vals, err := decodeObject(r.GetValues())
			if err != nil {
				return nil, h.p.callError("BeforeSave "+call.Feature, fmt.Errorf("row %d: %w", i, err))
			}
			out[i].Values = vals
		} else if i < len(call.Rows) {
			out[i].Values = call.Rows[i].Values // nothing patched
		}
		for _, fe := range r.GetErrors() {
			out[i].Errors = append(out[i].Errors, records.FieldError{Field: fe.GetField(), Rule: fe.GetRule(),
				Message: fe.GetMessage(), Path: fe.GetPath()})
		}
	}
	return out, nil
}

// AfterSave tells the plugin about written rows, within HookTimeout.
func (h hook) AfterSave(ctx context.Context, call records.HookCall) error {
	c, err := h.p.client()
	if err != nil {
		return err
	}
	req, err := h.saveRequest(call)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, h.p.m.opts.HookTimeout)
	defer cancel()
	if _, err := c.AfterSave(ctx, req); err != nil {
		return h.p.callError("AfterSave "+call.Feature, err, callAttrs(call)...)
	}
	return nil
}

// sectionSource fills a plugin's record sections, within CallTimeout.
type sectionSource struct{ p *plugin }

func (s sectionSource) Enrich(ctx context.Context, section, table string, ids []int64, actor *records.Actor) (map[int64]any, error) {
	c, err := s.p.client()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.p.m.opts.CallTimeout)
	defer cancel()
	resp, err := c.EnrichRecord(ctx, &pluginv1.EnrichRequest{Section: section, Table: table, Ids: ids, Actor: actorProto(actor)})
	if err != nil {
		return nil, s.p.callError("EnrichRecord "+section, err)
	}
	out := make(map[int64]any, len(resp.GetSections()))
	for id, raw := range resp.GetSections() {
		v, err := decodeValue(raw)
		if err != nil {
			return nil, s.p.callError("EnrichRecord "+section, fmt.Errorf("record %d: %w", id, err))
		}
		out[id] = v
	}
	return out, nil
}

// sectionProbe looks, in a record's read, for its rows of a section the
// manifest declares made of rows of a system table (names checked against
// the manifest when the plugin loaded).
type sectionProbe struct {
	p                            *plugin
	table, tableColumn, idColumn string
	empty                        []byte // JSON; empty: null
}

func (sp sectionProbe) Has(ctx context.Context, db *store.DB, table string, id int64) (string, []any, error) {
	// The tables of a plugin exist in an app once it has used them; a
	// read may come first.
	if err := sp.p.m.ensureSystemTables(ctx, db, sp.p); err != nil {
		return "", nil, err
	}
	q := db.Engine.Quote
	return `EXISTS (SELECT 1 FROM ` + db.Qualify(sp.table) + ` WHERE ` + q(sp.tableColumn) + ` = ? AND ` + q(sp.idColumn) + ` = ?)`,
		[]any{table, id}, nil
}

func (sp sectionProbe) Empty() (any, error) {
	if len(sp.empty) == 0 {
		return nil, nil
	}
	// Decoded for each record: the value is the record's own to change.
	return decodeValue(sp.empty)
}

// decodeValue reads JSON keeping numbers exact.
func decodeValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func decodeObject(raw []byte) (map[string]any, error) {
	v, err := decodeValue(raw)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

var _ records.FeatureHook = hook{}
var _ records.SectionSource = sectionSource{}
