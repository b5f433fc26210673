package dbmlapi

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/dbml"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/vocab"
)

// exportHeader opens every export. It names neither the app nor the time,
// so that the same schema always gives the same text.
const exportHeader = "Strata schema (DBML). bdus:* notes carry the configuration for a re-import."

// Export writes the app's user tables (system tables and the columns and
// child tables of plugin features left out), their fields with their
// configuration in bdus:* notes, the user indexes, the recorded relations
// and every vocabulary (as an Enum marked // bdus:vocabulary, values
// quoted).
func Export(ctx context.Context, db *store.DB) (string, error) {
	s, err := exportSchema(ctx, db)
	if err != nil {
		return "", err
	}
	return dbml.Print(s, exportHeader), nil
}

func exportSchema(ctx context.Context, db *store.DB) (*dbml.Schema, error) {
	cat, err := schema.Load(ctx, db)
	if err != nil {
		return nil, err
	}
	sets, err := vocab.List(ctx, db, "")
	if err != nil {
		return nil, err
	}
	rels, err := schema.ListRelations(ctx, db)
	if err != nil {
		return nil, err
	}
	s := &dbml.Schema{}
	for _, set := range sets {
		e := &dbml.Enum{Name: set.Name, Vocabulary: true}
		for _, it := range set.Items {
			e.Values = append(e.Values, &dbml.EnumValue{Name: it.Def})
		}
		s.Enums = append(s.Enums, e)
	}
	exported := map[string]*schema.Table{}
	for _, t := range cat.Tables {
		if t.Feature != "" {
			continue // a plugin feature's child table: the feature makes it
		}
		idx, err := schema.ListIndexes(ctx, db, t.Name)
		if err != nil {
			return nil, err
		}
		s.Tables = append(s.Tables, exportTable(t, idx))
		exported[t.Name] = t
	}
	for _, r := range rels {
		if !exportedColumn(exported, r.FromTb, r.FromCol) || !exportedColumn(exported, r.ToTb, r.ToCol) {
			continue
		}
		s.Refs = append(s.Refs, &dbml.Ref{
			From: dbml.Endpoint{Table: r.FromTb, Columns: []string{r.FromCol}}, Rel: ">",
			To:       dbml.Endpoint{Table: r.ToTb, Columns: []string{r.ToCol}},
			OnDelete: strings.ToLower(r.OnDelete), OnUpdate: strings.ToLower(r.OnUpdate),
		})
	}
	return s, nil
}

func exportedColumn(tables map[string]*schema.Table, table, col string) bool {
	t, ok := tables[table]
	if !ok {
		return false
	}
	if col == schema.ColID {
		return true
	}
	f, ok := t.Field(col)
	return ok && f.Feature == ""
}

// autoIndexName is the name CreateIndex makes from ids, which a re-import
// makes again (differently): only names people chose are exported.
var autoIndexName = regexp.MustCompile(`^ix_[0-9]+_u[0-9]+$`)

func exportTable(t *schema.Table, idx []*schema.Index) *dbml.Table {
	out := &dbml.Table{Name: t.Name}
	out.Columns = append(out.Columns, &dbml.Column{Name: schema.ColID, Type: dbml.TypeRef{Name: "integer"}, PK: true, Increment: true})
	if t.IsPlugin {
		c := &dbml.Column{Name: schema.ColIDLink, Type: dbml.TypeRef{Name: "integer"}, NotNull: true}
		if t.PluginOf != "" {
			c.Ref = &dbml.InlineRef{Rel: ">", To: dbml.Endpoint{Table: t.PluginOf, Columns: []string{schema.ColID}}}
		}
		out.Columns = append(out.Columns, c)
	} else {
		out.Columns = append(out.Columns, &dbml.Column{Name: schema.ColCreator, Type: dbml.TypeRef{Name: "integer"}})
	}
	for _, f := range t.Fields {
		if f.Feature == "" {
			out.Columns = append(out.Columns, exportField(f))
		}
	}
	var w noteWriter
	if t.Label != t.Name {
		w.set("label", t.Label)
	}
	if t.IsPlugin {
		if t.PluginOf != "" {
			w.set("is_plugin", t.PluginOf)
		} else {
			w.flag("is_plugin", true)
		}
	}
	w.set("preview", strings.Join(t.Preview, ","))
	if t.SortField != schema.ColID {
		w.set("order", t.SortField)
	}
	if t.IDField != schema.ColID {
		w.set("id_field", t.IDField)
	}
	switch {
	case t.RS && t.RSField != "":
		w.set("rs", t.RSField)
	case t.RS:
		w.set("rs", "1")
	}
	if t.Geodata {
		w.set("geodata", "1")
	}
	if t.RefMgr {
		w.set("refmgr", "1")
	}
	var features []string
	for name, st := range t.Features {
		if st.Active {
			features = append(features, name)
		}
	}
	sort.Strings(features)
	w.set("features", strings.Join(features, ","))
	out.Note = w.String()
	for _, ix := range idx {
		e := &dbml.Index{Unique: ix.Unique}
		if !autoIndexName.MatchString(ix.Name) {
			e.Name = ix.Name
		}
		for _, c := range ix.Columns {
			e.Columns = append(e.Columns, dbml.IndexColumn{Name: c})
		}
		out.Indexes = append(out.Indexes, e)
	}
	return out
}

func formatFloat(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// exportField writes a field as a column: the DBML type of its storage,
// not null for required, unique, its default, a ref for a lookup, and
// the rest of its configuration as bdus:* annotations, bdus:type and
// bdus:db_type only where the type and annotations would not give them.
func exportField(f *schema.Field) *dbml.Column {
	typeName := exportType(f.DBType)
	if f.DBType == schema.DBText && (f.Type == schema.TypeLongText || f.Type == schema.TypeMarkdown) {
		typeName = "text" // as BraDypUS writes long text
	}
	c := &dbml.Column{Name: f.Name, Type: dbml.TypeRef{Name: typeName}, NotNull: f.Required, Unique: f.Unique}
	if f.DefValue != "" {
		c.Default = &dbml.Value{Kind: dbml.KindString, Text: f.DefValue}
	}
	lookup := f.IDFromTb != ""
	if lookup {
		c.Ref = &dbml.InlineRef{Rel: ">", To: dbml.Endpoint{Table: f.IDFromTb, Columns: []string{schema.ColID}}}
	}
	// What a re-import derives from the column alone, then with bdus:type.
	derive := annotations{kv: map[string]string{}}
	if f.VocabularySet != "" {
		derive.kv["voc"] = f.VocabularySet
	}
	k := kindOf(typeName, false, lookup, derive)
	if k.ft != f.Type {
		derive.kv["type"] = string(f.Type)
		k = kindOf(typeName, false, lookup, derive)
	}
	var w noteWriter
	if f.Label != f.Name {
		w.set("label", f.Label)
	}
	w.set("type", derive.kv["type"])
	if k.dbt != f.DBType {
		w.set("db_type", string(f.DBType))
	}
	w.set("voc", f.VocabularySet)
	w.flag("id_from_tb", lookup)
	w.set("get_values_from_tb", f.GetValuesFromTb)
	w.flag("readonly", f.Readonly)
	w.flag("hide", f.Hide)
	w.set("widget", f.Widget)
	w.set("min", formatFloat(f.Min))
	w.set("max", formatFloat(f.Max))
	if f.Min == nil {
		w.set("min", f.DateBound("min"))
	}
	if f.Max == nil {
		w.set("max", f.DateBound("max"))
	}
	if f.MaxLength != nil {
		w.set("max_length", strconv.Itoa(*f.MaxLength))
	}
	w.set("pattern", f.Pattern)
	w.set("help", f.Help)
	c.Note = w.String()
	return c
}

// systemColumns are the columns every table has, which a DBML text may
// list and an import never adds as fields (table_link: BraDypUS 4's
// plugin tables).
var systemColumns = []string{schema.ColID, schema.ColCreator, schema.ColIDLink, "table_link"}

func isSystemColumn(name string) bool { return slices.Contains(systemColumns, name) }
