package records

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
)

// obj is a JSON object of the full record.
type obj = map[string]any

// Read returns the full record of CONTRACT §5: fields, plugin rows, links,
// backlinks, manual links, files, geodata, stratigraphic relations,
// bibliography and schema. Each section costs one query (or one per
// table it reaches), never one per row.
func Read(ctx context.Context, s *Scope, id int64) (obj, error) {
	if id <= 0 {
		return nil, ErrInvalidID
	}
	// The version is read before the state: a change committed in between
	// makes it older than what is shown (a later If-Match is refused),
	// never newer (which would let a stale edit through).
	version, err := RecordVersion(ctx, s, id)
	if err != nil {
		return nil, err
	}
	st, err := s.readState(ctx, id)
	if err != nil {
		return nil, err
	}
	out, err := s.assemble(ctx, id, st)
	if err != nil {
		return nil, err
	}
	out["metadata"].(obj)["version"] = version
	return out, nil
}

// ReadNew returns the same shape for a record not yet created: empty
// values, defaults applied.
func ReadNew(ctx context.Context, s *Scope) (obj, error) {
	st := &State{Core: map[string]any{}, Plugins: map[string][]map[string]any{}}
	for _, f := range s.Table.Fields {
		if dv, ok := defaultValue(f, s); ok {
			if v, err := toDB(s.DB.Engine, f.DBType, dv); err == nil {
				st.Core[f.Name] = fromDB(f.DBType, v)
			}
		}
	}
	for _, pt := range s.Catalog.PluginTables(s.Table.Name) {
		st.Plugins[pt.Name] = []map[string]any{}
	}
	return s.assemble(ctx, 0, st)
}

func (s *Scope) assemble(ctx context.Context, id int64, st *State) (obj, error) {
	t := s.Table
	canEdit := id != 0 && s.CanEdit(st.Creator)
	idField := IDFieldOf(t)
	meta := obj{"tb_id": t.Name, "tb_label": t.Label, "rec_id": id, "id_field": idField,
		"can_add": s.CanAdd(), "can_edit": canEdit, "can_delete": canEdit}
	core, err := s.coreSection(ctx, t, st.Core)
	if err != nil {
		return nil, err
	}
	plugins := obj{}
	for _, pt := range s.Catalog.PluginTables(t.Name) {
		rows := st.Plugins[pt.Name]
		data := make([]obj, 0, len(rows))
		for _, r := range rows {
			entry := obj{schema.ColID: obj{"name": schema.ColID, "label": "ID", "val": r[schema.ColID]}}
			for _, f := range pt.Fields {
				entry[f.Name] = obj{"name": f.Name, "label": f.Label, "val": r[f.Name]}
			}
			data = append(data, entry)
		}
		plugins[pt.Name] = obj{"metadata": obj{"tb_id": pt.Name, "tb_label": pt.Label, "tot": len(rows)}, "data": data}
	}
	out := obj{
		"metadata": meta, "rec_id": id, "id_field": idField,
		"can_add": meta["can_add"], "can_edit": canEdit, "can_delete": canEdit,
		"core": core, "plugins": plugins,
		"links": obj{}, "backlinks": obj{}, "manualLinks": obj{}, "rs": obj{},
		"files": []obj{}, "geodata": obj{}, "bibliography": obj{},
		"schema": s.schemaSection(),
	}
	for _, sec := range s.Sections {
		out[sec.Name] = nil
		if id == 0 || sec.Source == nil {
			continue
		}
		vals, err := sec.Source.Enrich(ctx, sec.Name, t.Name, []int64{id}, s.hookActor())
		if err != nil {
			// A plugin section must not take the record down with it.
			if s.HookLog != nil {
				s.HookLog(sec.Name, err)
			}
			continue
		}
		out[sec.Name] = vals[id]
	}
	if id == 0 {
		return out, nil
	}
	if s.Files != nil {
		if out["files"], err = s.Files.RecordFiles(ctx, s.DB, s.App, t.Name, id); err != nil {
			return nil, err
		}
	}
	for key, section := range map[string]func(context.Context, int64) (obj, error){
		"links": s.linksSection, "backlinks": s.backlinksSection,
		"manualLinks": s.manualLinksSection, "rs": s.rsSection,
	} {
		v, err := section(ctx, id)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

// coreSection gives every field {name, label, val}, plus val_label for
// lookups (one query per referenced table; null where the caller may not
// read the referenced record) and html for Markdown.
func (s *Scope) coreSection(ctx context.Context, t *schema.Table, vals map[string]any) (obj, error) {
	byTable := map[string][]int64{}
	for _, f := range t.Fields {
		if n, ok := vals[f.Name].(int64); ok && f.IDFromTb != "" {
			byTable[f.IDFromTb] = append(byTable[f.IDFromTb], n)
		}
	}
	labels := map[string]map[int64]string{}
	for tb, ids := range byTable {
		ref, ok := s.Catalog.Table(tb)
		if !ok {
			continue
		}
		l, err := s.labels(ctx, ref, ids)
		if err != nil {
			return nil, err
		}
		labels[tb] = l
	}
	core := obj{}
	for _, f := range t.Fields {
		e := obj{"name": f.Name, "label": f.Label, "val": vals[f.Name]}
		if f.IDFromTb != "" {
			var vl any
			if n, ok := vals[f.Name].(int64); ok {
				vl = labelOf(labels[f.IDFromTb], n)
			}
			e["val_label"] = vl
		}
		if f.Type == schema.TypeMarkdown {
			if txt, ok := vals[f.Name].(string); ok {
				e["html"] = RenderMarkdown(txt)
			} else {
				e["html"] = ""
			}
		}
		core[f.Name] = e
	}
	return core, nil
}

// OptionsSource tells a client where a select field's values come from
// (CONTRACT §8).
func OptionsSource(f *schema.Field) any {
	switch {
	case f.VocabularySet != "":
		return obj{"type": "vocabulary", "set": f.VocabularySet}
	case f.GetValuesFromTb != "":
		return obj{"type": "db", "ref": f.GetValuesFromTb}
	case f.IDFromTb != "":
		return obj{"type": "id_from_tb", "ref": f.IDFromTb}
	}
	return nil
}

// FieldSchema is a field's description for clients.
func FieldSchema(f *schema.Field) obj {
	return obj{"name": f.Name, "label": f.Label, "type": f.Type, "db_type": f.DBType, "readonly": f.Readonly,
		"hide": f.Hide, "required": f.Required, "unique": f.Unique, "min": f.Min, "max": f.Max,
		"max_length": f.MaxLength, "pattern": f.Pattern, "def_value": f.DefValue, "help": f.Help,
		"widget": f.Widget, "vocabulary_set": f.VocabularySet, "get_values_from_tb": f.GetValuesFromTb,
		"id_from_tb": f.IDFromTb, "options_source": OptionsSource(f)}
}

// schemaSection is the table's schema as the full record shows it,
// encoded once per catalog and set of plugin flags: it is the largest part
// of a record's answer, and the same for every record of the table.
func (s *Scope) schemaSection() json.RawMessage {
	flags := make([]string, 0, len(s.SchemaFlags))
	for flag, on := range s.SchemaFlags {
		flags = append(flags, flag+"="+strconv.FormatBool(on))
	}
	slices.Sort(flags)
	key := schemaMemoKey{table: s.Table.Name, flags: strings.Join(flags, ",")}
	return s.Catalog.Memo(key, func() any {
		b, err := json.Marshal(s.buildSchemaSection())
		if err != nil {
			panic(fmt.Sprintf("records: encode schema of %s: %v", s.Table.Name, err)) // plain maps of strings, numbers and bools
		}
		return json.RawMessage(b)
	}).(json.RawMessage)
}

type schemaMemoKey struct{ table, flags string }

func (s *Scope) buildSchemaSection() obj {
	fields := make([]obj, 0, len(s.Table.Fields))
	for _, f := range s.Table.Fields {
		fields = append(fields, FieldSchema(f))
	}
	plugins := obj{}
	for _, pt := range s.Catalog.PluginTables(s.Table.Name) {
		pf := make([]obj, 0, len(pt.Fields))
		for _, f := range pt.Fields {
			pf = append(pf, FieldSchema(f))
		}
		plugins[pt.Name] = obj{"tb_id": pt.Name, "tb_label": pt.Label, "fields": pf}
	}
	sch := obj{"fields": fields, "plugins": plugins, "rs": s.Table.RS, "id_field": IDFieldOf(s.Table),
		"has_geodata": s.Table.Geodata, "has_refmgr": s.Table.RefMgr, "has_chronology": false,
		"has_osteology": false, "template": nil}
	for flag, on := range s.SchemaFlags {
		sch[flag] = on
	}
	return sch
}

// referrers lists (table, column) pairs whose values are ids of t: lookup
// fields pointing at it. Relations recorded in the catalog are added by
// the configuration layer as lookups or FKs; here lookups are the source.
func (s *Scope) referrers() [][2]string {
	var out [][2]string
	for _, other := range s.Catalog.Tables {
		for _, f := range other.Fields {
			if f.IDFromTb == s.Table.Name {
				out = append(out, [2]string{other.Name, f.Name})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0]+"."+out[i][1] < out[j][0]+"."+out[j][1] })
	return out
}

// linksSection counts, per referring table the caller may read, the rows
// it may see that point at the record, in one UNION ALL query, with the
// click-through filter.
func (s *Scope) linksSection(ctx context.Context, id int64) (obj, error) {
	out := obj{}
	var refs [][2]string
	var parts []string
	var args []any
	for _, r := range s.referrers() {
		ref, _ := s.Catalog.Table(r[0])
		acc, err := s.accessTo(ctx, ref)
		if err != nil {
			return nil, err
		}
		if !acc.Readable() {
			continue
		}
		q := s.DB.Qualify(r[0])
		part := `SELECT ? AS k, COUNT(*) FROM ` + q + ` WHERE ` + q + `.` + s.DB.Engine.Quote(r[1]) + ` = ?`
		args = append(args, strconv.Itoa(len(refs)), id)
		if acc.Restrict != nil && acc.Restrict.SQL != "" {
			part += ` AND (` + acc.Restrict.SQL + `)`
			args = append(args, acc.Restrict.Args...)
		}
		refs, parts = append(refs, r), append(parts, part)
	}
	if len(refs) == 0 {
		return out, nil
	}
	rows, err := s.DB.Query(ctx, strings.Join(parts, " UNION ALL "), args...)
	if err != nil {
		return nil, fmt.Errorf("links of %s %d: %w", s.Table.Name, id, err)
	}
	defer rows.Close()
	counts := map[int]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		i, _ := strconv.Atoi(k)
		counts[i] = n
	}
	for i, r := range refs {
		ref, _ := s.Catalog.Table(r[0])
		key := r[0]
		if _, dup := out[key]; dup {
			key = r[0] + ":" + r[1]
		}
		out[key] = obj{"tb_id": r[0], "tb_label": ref.Label, "tot": counts[i],
			"filter": obj{r[1]: obj{"_eq": id}}}
	}
	return out, rows.Err()
}

// backlinksSection lists, per configured backlink refTb:viaTb:fkCol, the
// refTb records linked to this one through viaTb.fkCol (one query each),
// within the caller's privilege and row subsets on both tables.
func (s *Scope) backlinksSection(ctx context.Context, id int64) (obj, error) {
	out := obj{}
	for _, bl := range s.Table.Backlinks {
		parts := strings.Split(bl, ":")
		if len(parts) != 3 {
			continue
		}
		refTb, viaTb, fkCol := parts[0], parts[1], parts[2]
		ref, ok1 := s.Catalog.Table(refTb)
		via, ok2 := s.Catalog.Table(viaTb)
		if !ok1 || !ok2 {
			continue
		}
		if _, ok := via.Field(fkCol); !ok {
			continue
		}
		link := schema.ColID
		if via.IsPlugin && via.PluginOf == refTb {
			link = schema.ColIDLink
		}
		refAcc, err := s.accessTo(ctx, ref)
		if err != nil {
			return nil, err
		}
		viaAcc, err := s.accessTo(ctx, via)
		if err != nil {
			return nil, err
		}
		if !refAcc.Readable() || !viaAcc.Readable() {
			continue // the caller may not read these tables: nothing of them shows
		}
		label := labelColumn(ref)
		qr, qv := s.DB.Qualify(refTb), s.DB.Qualify(viaTb)
		args := []any{id}
		inner := qv + `.` + s.DB.Engine.Quote(fkCol) + ` = ?`
		if c := viaAcc.Restrict; c != nil && c.SQL != "" {
			inner += ` AND (` + c.SQL + `)`
			args = append(args, c.Args...)
		}
		outer := qr + `."id" IN (SELECT ` + qv + `.` + s.DB.Engine.Quote(link) + ` FROM ` + qv + ` WHERE ` + inner + `)`
		if c := refAcc.Restrict; c != nil && c.SQL != "" {
			outer += ` AND (` + c.SQL + `)`
			args = append(args, c.Args...)
		}
		q := `SELECT ` + qr + `."id", ` + qr + `.` + s.DB.Engine.Quote(label) + ` FROM ` + qr + ` WHERE ` + outer + ` ORDER BY ` + qr + `."id"`
		rows, err := s.DB.Query(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("backlink %s: %w", bl, err)
		}
		dbt, _ := dbTypeOf(ref, label)
		data := []obj{}
		for rows.Next() {
			var rid int64
			var v any
			if err := rows.Scan(&rid, &v); err != nil {
				rows.Close()
				return nil, err
			}
			data = append(data, obj{"id": rid, "label": labelText(fromDB(dbt, v))})
		}
		rows.Close()
		out[refTb] = obj{"tb_id": refTb, "tb_label": ref.Label, "tot": len(data),
			"filter": obj{viaTb: obj{fkCol: obj{"_eq": id}}}, "data": data}
	}
	return out, nil
}
