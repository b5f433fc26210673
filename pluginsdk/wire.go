package pluginsdk

import (
	"bytes"
	"encoding/json"
	"time"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Conversions between the typed API and the generated messages. Plugin
// authors never need them; ManifestFromProto is exported for the server
// and plugintest, which receive the manifest over the wire.

func manifestToProto(m Manifest) *pluginv1.Manifest {
	pm := &pluginv1.Manifest{
		Name:            m.Name,
		Version:         m.Version,
		ProtocolVersion: m.ProtocolVersion,
		Description:     m.Description,
		SettingsSchema:  bytes.Clone(m.SettingsSchema),
	}
	pm.MinServerProtocol = m.MinServerProtocol
	for key, texts := range m.Messages {
		if pm.Messages == nil {
			pm.Messages = map[string]*pluginv1.Translations{}
		}
		pm.Messages[key] = &pluginv1.Translations{Text: cloneLabels(texts)}
	}
	for _, f := range m.Features {
		pf := &pluginv1.TableFeature{
			Name:       f.Name,
			Aliases:    f.Aliases,
			Label:      f.Label,
			Columns:    columnsToProto(f.Columns),
			Computed:   f.Computed,
			BeforeSave: f.BeforeSave,
			AfterSave:  f.AfterSave,
			Required:   f.Required,
			SchemaFlag: f.SchemaFlag,
			DependsOn:  f.DependsOn,
			Labels:     cloneLabels(f.Labels),
		}
		translateColumns(pf.Columns, f.ColumnLabels, f.ColumnHelp)
		if f.Child != nil {
			pf.Child = &pluginv1.ChildTable{Suffix: f.Child.Suffix, Label: f.Child.Label, Labels: cloneLabels(f.Child.Labels), Columns: columnsToProto(f.Child.Columns)}
			translateColumns(pf.Child.Columns, f.ColumnLabels, f.ColumnHelp)
		}
		pm.Features = append(pm.Features, pf)
	}
	for _, r := range m.Routes {
		ms := r.Timeout.Milliseconds()
		if ms == 0 && r.Timeout > 0 {
			ms = 1 // a sub-millisecond timeout is not "the default"
		}
		pm.Routes = append(pm.Routes, &pluginv1.Route{
			Method: r.Method, Path: r.Path, Access: r.Access,
			TimeoutMs: uint32(ms), BodyLimit: uint64(max(r.BodyLimit, 0)), Job: r.Job,
			TableParam: r.TableParam,
		})
	}
	for _, o := range m.Operators {
		pm.Operators = append(pm.Operators, &pluginv1.FilterOperator{Name: o.Name, Fields: o.Fields, Feature: o.Feature})
	}
	for _, s := range m.Sections {
		ps := &pluginv1.RecordSection{Name: s.Name, Feature: s.Feature, Label: s.Label, Labels: cloneLabels(m.SectionLabels[s.Name])}
		if r := s.Rows; r != nil {
			ps.Rows = &pluginv1.SectionRows{Table: r.Table, TableColumn: r.TableColumn, IdColumn: r.IDColumn}
			if r.Empty != nil {
				// Validate has checked that it encodes.
				ps.Rows.Empty, _ = json.Marshal(r.Empty)
			}
		}
		pm.Sections = append(pm.Sections, ps)
	}
	for _, t := range m.SystemTables {
		pt := &pluginv1.SystemTable{Name: t.Name, Columns: columnsToProto(t.Columns)}
		for _, ix := range t.Indexes {
			pt.Indexes = append(pt.Indexes, &pluginv1.SystemIndex{Columns: ix})
		}
		pm.SystemTables = append(pm.SystemTables, pt)
	}
	return pm
}

// translateColumns puts a feature's column translations on the wire
// columns they name (on the wire each column carries its own).
func translateColumns(cs []*pluginv1.Column, labels, help map[string]Labels) {
	for _, c := range cs {
		c.Labels = cloneLabels(labels[c.Name])
		c.HelpLabels = cloneLabels(help[c.Name])
	}
}

// columnTranslations gathers the wire columns' translations back into a
// feature's maps by column name (nil when none has any).
func columnTranslations(f *Feature, cs []*pluginv1.Column) {
	for _, c := range cs {
		if l := cloneLabels(c.GetLabels()); l != nil {
			if f.ColumnLabels == nil {
				f.ColumnLabels = map[string]Labels{}
			}
			f.ColumnLabels[c.GetName()] = l
		}
		if h := cloneLabels(c.GetHelpLabels()); h != nil {
			if f.ColumnHelp == nil {
				f.ColumnHelp = map[string]Labels{}
			}
			f.ColumnHelp[c.GetName()] = h
		}
	}
}

func columnsToProto(cs []Column) []*pluginv1.Column {
	out := make([]*pluginv1.Column, len(cs))
	for i, c := range cs {
		out[i] = &pluginv1.Column{Name: c.Name, Label: c.Label, Type: string(c.Type), DbType: string(c.DBType), Readonly: c.Readonly, Help: c.Help}
	}
	return out
}

// ManifestFromProto converts a manifest received over the wire (routes
// have no Handler). Validate it before use.
func ManifestFromProto(pm *pluginv1.Manifest) Manifest {
	m := Manifest{
		Name:            pm.GetName(),
		Version:         pm.GetVersion(),
		ProtocolVersion: pm.GetProtocolVersion(),
		Description:     pm.GetDescription(),
	}
	m.MinServerProtocol = pm.GetMinServerProtocol()
	for key, texts := range pm.GetMessages() {
		if m.Messages == nil {
			m.Messages = map[string]Labels{}
		}
		m.Messages[key] = cloneLabels(texts.GetText())
	}
	if len(pm.GetSettingsSchema()) > 0 {
		m.SettingsSchema = json.RawMessage(bytes.Clone(pm.GetSettingsSchema()))
	}
	for _, pf := range pm.GetFeatures() {
		f := Feature{
			Name:       pf.GetName(),
			Aliases:    pf.GetAliases(),
			Label:      pf.GetLabel(),
			Columns:    columnsFromProto(pf.GetColumns()),
			Computed:   pf.GetComputed(),
			BeforeSave: pf.GetBeforeSave(),
			AfterSave:  pf.GetAfterSave(),
			Required:   pf.GetRequired(),
			SchemaFlag: pf.GetSchemaFlag(),
			DependsOn:  pf.GetDependsOn(),
			Labels:     cloneLabels(pf.GetLabels()),
		}
		columnTranslations(&f, pf.GetColumns())
		if c := pf.GetChild(); c != nil {
			f.Child = &ChildTable{Suffix: c.GetSuffix(), Label: c.GetLabel(), Labels: cloneLabels(c.GetLabels()), Columns: columnsFromProto(c.GetColumns())}
			columnTranslations(&f, c.GetColumns())
		}
		m.Features = append(m.Features, f)
	}
	for _, r := range pm.GetRoutes() {
		m.Routes = append(m.Routes, Route{
			Method: r.GetMethod(), Path: r.GetPath(), Access: r.GetAccess(),
			Timeout:   time.Duration(r.GetTimeoutMs()) * time.Millisecond,
			BodyLimit: int64(min(r.GetBodyLimit(), 1<<62)), Job: r.GetJob(),
			TableParam: r.GetTableParam(),
		})
	}
	for _, o := range pm.GetOperators() {
		m.Operators = append(m.Operators, Operator{Name: o.GetName(), Fields: o.GetFields(), Feature: o.GetFeature()})
	}
	for _, s := range pm.GetSections() {
		sec := Section{Name: s.GetName(), Feature: s.GetFeature(), Label: s.GetLabel()}
		if l := cloneLabels(s.GetLabels()); l != nil {
			if m.SectionLabels == nil {
				m.SectionLabels = map[string]Labels{}
			}
			m.SectionLabels[s.GetName()] = l
		}
		if r := s.GetRows(); r != nil {
			sec.Rows = &SectionRows{Table: r.GetTable(), TableColumn: r.GetTableColumn(), IDColumn: r.GetIdColumn()}
			if len(r.GetEmpty()) > 0 {
				_ = json.Unmarshal(r.GetEmpty(), &sec.Rows.Empty)
			}
		}
		m.Sections = append(m.Sections, sec)
	}
	for _, t := range pm.GetSystemTables() {
		st := SystemTable{Name: t.GetName(), Columns: columnsFromProto(t.GetColumns())}
		for _, ix := range t.GetIndexes() {
			st.Indexes = append(st.Indexes, ix.GetColumns())
		}
		m.SystemTables = append(m.SystemTables, st)
	}
	return m
}

func columnsFromProto(cs []*pluginv1.Column) []Column {
	if len(cs) == 0 {
		return nil
	}
	out := make([]Column, len(cs))
	for i, c := range cs {
		out[i] = Column{Name: c.GetName(), Label: c.GetLabel(), Type: FieldType(c.GetType()), DBType: DBType(c.GetDbType()), Readonly: c.GetReadonly(), Help: c.GetHelp()}
	}
	return out
}

// cloneLabels copies a translation map (nil for none), so neither side
// of a conversion shares the other's map.
func cloneLabels(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func actorFromProto(a *pluginv1.Actor) Actor {
	return Actor{
		App: a.GetApp(), UserID: a.GetUserId(), APIKeyID: a.GetApiKeyId(),
		Privilege: int(a.GetPrivilege()), Name: a.GetName(), Email: a.GetEmail(),
	}
}

func actorToProto(a *Actor) *pluginv1.Actor {
	if a == nil {
		return nil
	}
	return &pluginv1.Actor{
		App: a.App, UserId: a.UserID, ApiKeyId: a.APIKeyID,
		Privilege: int32(a.Privilege), Name: a.Name, Email: a.Email,
	}
}
