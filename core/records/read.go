package records

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/jsonout"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// obj is a JSON object of the full record.
type obj = map[string]any

// Read returns the full record of CONTRACT §5: fields, plugin rows, links,
// backlinks, manual links, files, geodata, stratigraphic relations,
// bibliography and schema. Each section costs one query (or one per
// table it reaches), never one per row. The queries go in one pipeline:
// on PostgreSQL, those that need nothing read before (record with its
// version and lookup labels, plugin rows, files, links, backlinks, manual
// links, relations, geodata) are one round trip, the labels of what they found
// (manual links, relations) a second. SQLite runs them one by one, the
// record's version and labels in the record's own statement as well, with
// whether it has files, manual links, relations, features and plugin
// section rows: only the sections it has cost a statement.
func Read(ctx context.Context, s *Scope, id int64) (obj, error) {
	if id <= 0 {
		return nil, ErrInvalidID
	}
	p := s.DB.Pipeline()
	var version int64
	var st *State
	var sections *recordSections
	var have *sectionProbes
	labels := map[string]map[int64]string{}
	found := func(got *State) error { st = got; return nil }
	// The version is read before the state: a change committed in between
	// makes it older than what is shown (a later If-Match is refused),
	// never newer (which would let a stale edit through).
	// One statement for the row, its version and its labels where queries
	// are batched (PostgreSQL) and on SQLite, where each statement is a
	// read transaction of its own (its WAL read lock taken and released);
	// one after another only for tests comparing the two ways.
	folded := p.Pipelined(ctx) || (s.DB.Engine == store.SQLite && !store.Unpipelined(ctx))
	var lookups *rowLookups
	if !folded {
		// One query after another: the version, the record, then the
		// labels of the ids it shows.
		s.queueVersion(p, id, &version)
		found = func(got *State) error {
			st = got
			return s.queueCoreLabels(ctx, p, s.Table, st.Core, labels)
		}
		s.queueState(p, id, nil, found)
	} else {
		// Every query costs the server a statement: the version and the
		// lookup labels are selected with the record's row, in its
		// statement, at its snapshot (so the version is not newer than the
		// state). Lookups of the record's own table come in a query of
		// their own in the same round trip (lookupsOf).
		extra := &rowExtras{}
		extra.add(`(SELECT COALESCE(MAX(v."id"), 0) FROM `+s.DB.Sys("versions")+` AS v WHERE v.tb = ? AND v.record_id = ?)`,
			&version, s.Table.Name, id)
		var err error
		if lookups, err = s.lookupsOf(ctx, p, id, extra, labels); err != nil {
			return nil, err
		}
		// Whether the record has files, manual links, relations,
		// features and plugin section rows comes with its row; the
		// sections' queries are queued once it is read, only for those
		// it has (most records have none). Each query costs the server
		// a statement, on PostgreSQL too: a record without sections is
		// read with one, one with sections in a second round trip
		// (measured: 10% more reads by id a second on PostgreSQL).
		if have, err = s.probeSections(ctx, id, extra); err != nil {
			return nil, err
		}
		// The request's assumed versions (if any) are checked with the
		// row too, not by a statement of their own.
		assumed := store.AssumedIn(ctx, s.DB)
		if assumed != nil {
			for i, expr := range assumed.Exprs {
				extra.add(expr, assumed.Dest[i], assumed.Args[i])
			}
		}
		// The links and backlinks, which no probe knows of, go with the
		// record's statement (one round trip on PostgreSQL).
		sections = &recordSections{}
		if err := s.queueLinkSections(ctx, p, id, sections); err != nil {
			return nil, err
		}
		found = func(got *State) error {
			st = got
			if assumed != nil {
				if err := assumed.Scanned(); err != nil {
					return err
				}
			}
			return s.queueProbedSections(ctx, p, id, have, sections)
		}
		s.queueState(p, id, extra, found)
	}
	if have == nil {
		var err error
		if sections, err = s.queueSections(ctx, p, id, nil); err != nil {
			return nil, err
		}
	}
	if err := p.Run(ctx); err != nil {
		return nil, err
	}
	if st == nil {
		return nil, ErrRecordNotFound
	}
	if lookups != nil {
		if err := lookups.finish(ctx, st); err != nil {
			return nil, err
		}
	}
	out, err := s.assemble(ctx, id, st, labels, sections)
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
	labels := map[string]map[int64]string{}
	p := s.DB.Pipeline()
	if err := s.queueCoreLabels(ctx, p, s.Table, st.Core, labels); err != nil {
		return nil, err
	}
	if err := p.Run(ctx); err != nil {
		return nil, err
	}
	return s.assemble(ctx, 0, st, labels, nil)
}

// recordSections are the sections of a full record its pipeline reads
// besides the record itself; each finish gives its section once the
// pipeline has run.
type recordSections struct {
	files                                           any // nil: read after the pipeline (FilesSource without a queue)
	links, backlinks, manualLinks, rsLinks, geodata func() obj
	// hasRows, by plugin section with a Probe: whether the record has
	// rows for it.
	hasRows map[string]*bool
}

// sectionProbes say, from the record's own statement, which sections
// have rows for it; a section without a probe is read whatever.
type sectionProbes struct {
	filesProbed                     bool
	files, manualLinks, rs, geodata bool
	plugins                         map[string]*bool // by plugin section with a Probe
}

// probeSections adds to the record's statement whether the record has
// files, manual links, relations, features and rows of the plugin
// sections that have a probe: each an EXISTS on the index its section's
// query uses, far cheaper than that query as a statement of its own.
func (s *Scope) probeSections(ctx context.Context, id int64, extra *rowExtras) (*sectionProbes, error) {
	have := &sectionProbes{}
	var err error
	have.plugins, err = s.probePlugins(ctx, id, func(_, expr string, args []any, has *bool) {
		extra.add(expr, has, args...)
	})
	if err != nil {
		return nil, err
	}
	if fp, ok := s.Files.(FilesProber); ok {
		expr, args := fp.RecordFilesExist(s.DB, s.Table.Name, id)
		extra.add(expr, &have.files, args...)
		have.filesProbed = true
	}
	extra.add(`EXISTS (SELECT 1 FROM `+s.DB.Sys("manual_links")+` WHERE (tb_one = ? AND id_one = ?) OR (tb_two = ? AND id_two = ?))`,
		&have.manualLinks, s.Table.Name, id, s.Table.Name, id)
	extra.add(`EXISTS (SELECT 1 FROM `+s.DB.Sys("rs")+` WHERE tb = ? AND (first = ? OR second = ?))`,
		&have.rs, s.Table.Name, id, id)
	if s.Table.Geodata {
		extra.add(`EXISTS (SELECT 1 FROM `+s.DB.Sys("geodata")+` WHERE tb = ? AND record_id = ?)`,
			&have.geodata, s.Table.Name, id)
	}
	return have, nil
}

// queueSections queues the queries of the record's files, links,
// backlinks, manual links and relations; have (nil: none known) skips
// those the record's statement found empty.
func (s *Scope) queueSections(ctx context.Context, p *store.Pipeline, id int64, have *sectionProbes) (*recordSections, error) {
	sec := &recordSections{}
	if err := s.queueLinkSections(ctx, p, id, sec); err != nil {
		return nil, err
	}
	return sec, s.queueProbedSections(ctx, p, id, have, sec)
}

// queueLinkSections queues the queries of the sections no probe knows of
// (links, backlinks): a read queues them with the record's own, in its
// first round trip.
func (s *Scope) queueLinkSections(ctx context.Context, p *store.Pipeline, id int64, sec *recordSections) (err error) {
	if sec.links, err = s.queueLinks(ctx, p, id); err != nil {
		return err
	}
	sec.backlinks, err = s.queueBacklinks(ctx, p, id)
	return err
}

// queueProbedSections queues the queries of the sections a probe knows
// of (files, manual links, relations, features, plugin sections), those
// have (nil: none known) did not find empty.
func (s *Scope) queueProbedSections(ctx context.Context, p *store.Pipeline, id int64, have *sectionProbes, sec *recordSections) error {
	none := func() obj { return obj{} }
	if q, ok := s.Files.(FilesQueuer); ok {
		if have != nil && have.filesProbed && !have.files {
			sec.files = []map[string]any{}
		} else {
			q.QueueRecordFiles(ctx, p, s.App, s.Table.Name, id, func(files any) { sec.files = files })
		}
	}
	sec.manualLinks, sec.rsLinks, sec.geodata = none, none, none
	if have == nil || have.manualLinks {
		sec.manualLinks = s.queueManualLinks(ctx, p, id)
	}
	if have == nil || have.rs {
		sec.rsLinks = s.queueRS(ctx, p, id)
	}
	if have == nil || have.geodata {
		sec.geodata = s.queueGeodata(p, id)
	}
	if have != nil {
		sec.hasRows = have.plugins
		return nil
	}
	var err error
	sec.hasRows, err = s.probePlugins(ctx, id, func(name, expr string, args []any, has *bool) {
		p.QueryRow("rows of section "+name, `SELECT `+expr, args, has)
	})
	return err
}

// probePlugins gives add, for each plugin section with a probe, the
// expression telling whether record id has rows for it and where its
// value is to go; it returns those places by section (nil: none).
func (s *Scope) probePlugins(ctx context.Context, id int64, add func(section, expr string, args []any, has *bool)) (map[string]*bool, error) {
	var out map[string]*bool
	for _, ps := range s.Sections {
		if ps.Probe == nil || ps.Source == nil {
			continue
		}
		expr, args, err := ps.Probe.Has(ctx, s.DB, s.Table.Name, id)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]*bool{}
		}
		has := new(bool)
		add(ps.Name, expr, args, has)
		out[ps.Name] = has
	}
	return out, nil
}

// probed is whether the record has rows for the plugin section name, as
// its probe found; nil where none looked (no probe, or a new record).
func (sec *recordSections) probed(name string) *bool {
	if sec == nil {
		return nil
	}
	return sec.hasRows[name]
}

// queueVersion queues the query of the record's version (RecordVersion).
func (s *Scope) queueVersion(p *store.Pipeline, id int64, into *int64) {
	p.QueryRow(fmt.Sprintf("version of %s %d", s.Table.Name, id), `SELECT COALESCE(MAX(id), 0) FROM `+s.DB.Sys("versions")+
		` WHERE tb = ? AND record_id = ?`, []any{s.Table.Name, id}, into)
}

// assemble builds the full record from its state, the labels of its
// lookups and its other sections (nil for a new record).
func (s *Scope) assemble(ctx context.Context, id int64, st *State, labels map[string]map[int64]string, sec *recordSections) (obj, error) {
	t := s.Table
	canEdit := id != 0 && s.CanEdit(st.Creator)
	idField := IDFieldOf(t)
	meta := obj{"tb_id": t.Name, "tb_label": t.Label, "rec_id": id, "id_field": idField,
		"can_add": s.CanAdd(), "can_edit": canEdit, "can_delete": canEdit}
	core := s.coreSection(t, st.Core, labels)
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
	for _, ps := range s.Sections {
		out[ps.Name] = nil
		if id == 0 || ps.Source == nil {
			continue
		}
		if has := sec.probed(ps.Name); has != nil && !*has {
			// Nothing for this record: the section's empty value, with no
			// call to the plugin (most records of most tables).
			empty, err := ps.Probe.Empty()
			if err != nil {
				return nil, err
			}
			out[ps.Name] = empty
			continue
		}
		vals, err := ps.Source.Enrich(ctx, ps.Name, t.Name, []int64{id}, s.hookActor())
		if err != nil {
			// A plugin section must not take the record down with it.
			if s.HookLog != nil {
				s.HookLog(ps.Name, err)
			}
			continue
		}
		out[ps.Name] = vals[id]
	}
	if id == 0 {
		return out, nil
	}
	if sec.files != nil {
		out["files"] = sec.files
	} else if s.Files != nil {
		files, err := s.Files.RecordFiles(ctx, s.DB, s.App, t.Name, id)
		if err != nil {
			return nil, err
		}
		out["files"] = files
	}
	out["links"], out["backlinks"] = sec.links(), sec.backlinks()
	out["manualLinks"], out["rs"] = sec.manualLinks(), sec.rsLinks()
	out["geodata"] = sec.geodata()
	return out, nil
}

// queueCoreLabels queues the labels of vals' lookups (one query per
// referenced table) into labels, by referenced table: none where the
// caller may not read the referenced record.
func (s *Scope) queueCoreLabels(ctx context.Context, p *store.Pipeline, t *schema.Table, vals map[string]any, labels map[string]map[int64]string) error {
	var byTable map[string][]int64
	var tables []string
	for _, f := range t.Fields {
		if n, ok := vals[f.Name].(int64); ok && f.IDFromTb != "" {
			if byTable == nil {
				byTable = map[string][]int64{}
			}
			if _, seen := byTable[f.IDFromTb]; !seen {
				tables = append(tables, f.IDFromTb)
			}
			byTable[f.IDFromTb] = append(byTable[f.IDFromTb], n)
		}
	}
	for _, tb := range tables {
		ref, ok := s.Catalog.Table(tb)
		if !ok {
			continue
		}
		labels[tb] = map[int64]string{}
		if err := s.queueLabels(ctx, p, ref, byTable[tb], labels[tb]); err != nil {
			return err
		}
	}
	return nil
}

// rowLookups are the lookup labels of a record read with its row (see
// lookupsOf).
type rowLookups struct {
	s      *Scope
	labels map[string]map[int64]string
	// in the row: per lookup field, the referenced id as the caller may
	// see it and its label value
	fields []*schema.Field
	ids    []sql.NullInt64
	vals   []any
	// own lists the lookups of the record's own table, read by a query of
	// their own (queueLookupLabels) at its own snapshot
	own []string
}

// lookupsOf arranges the labels of record id's lookups for a read in one
// round trip. A lookup of another table is two scalar subqueries of the
// record's row (the referenced id, within the caller's access to that
// table, and its label): same statement, same snapshot, no statement of
// its own. A lookup of the record's own table cannot be one (the
// subquery's table would shadow the row's): its labels come from one
// query that finds the ids itself, checked in finish.
func (s *Scope) lookupsOf(ctx context.Context, p *store.Pipeline, id int64, extra *rowExtras, labels map[string]map[int64]string) (*rowLookups, error) {
	lk := &rowLookups{s: s, labels: labels}
	type lookup struct {
		f   *schema.Field
		ref *schema.Table
		acc TableAccess
	}
	var in []lookup
	for _, f := range s.Table.Fields {
		if f.IDFromTb == "" || f.DBType != schema.DBInt {
			continue
		}
		if f.IDFromTb == s.Table.Name {
			lk.own = append(lk.own, f.Name)
			continue
		}
		ref, ok := s.Catalog.Table(f.IDFromTb)
		if !ok {
			continue
		}
		acc, err := s.accessTo(ctx, ref)
		if err != nil {
			return nil, err
		}
		if acc.Readable() {
			in = append(in, lookup{f, ref, acc})
		}
	}
	lk.fields = make([]*schema.Field, len(in))
	lk.ids = make([]sql.NullInt64, len(in))
	lk.vals = make([]any, len(in))
	own := s.DB.Qualify(s.Table.Name)
	for i, l := range in {
		lk.fields[i] = l.f
		if labels[l.ref.Name] == nil {
			labels[l.ref.Name] = map[int64]string{}
		}
		q := s.DB.Qualify(l.ref.Name)
		where := q + `."id" = ` + own + `.` + s.DB.Engine.Quote(l.f.Name)
		var args []any
		if c := l.acc.Restrict; c != nil && c.SQL != "" {
			where += ` AND (` + c.SQL + `)`
			args = c.Args
		}
		extra.add(`(SELECT `+q+`."id" FROM `+q+` WHERE `+where+`)`, &lk.ids[i], args...)
		if col := labelColumn(l.ref); col != schema.ColID {
			extra.add(`(SELECT `+q+`.`+s.DB.Engine.Quote(col)+` FROM `+q+` WHERE `+where+`)`, &lk.vals[i], args...)
		}
	}
	if len(lk.own) > 0 {
		if labels[s.Table.Name] == nil {
			labels[s.Table.Name] = map[int64]string{}
		}
		if err := s.queueLookupLabels(ctx, p, id, s.Table, lk.own, labels[s.Table.Name]); err != nil {
			return nil, err
		}
	}
	return lk, nil
}

// finish puts the labels read with the row in place, then looks up again,
// as a read one query after another does, the ids of the record's own
// table the row shows without a label (hidden from the caller, gone, or
// changed between the two statements).
func (lk *rowLookups) finish(ctx context.Context, st *State) error {
	s := lk.s
	for i, f := range lk.fields {
		if !lk.ids[i].Valid {
			continue // none, hidden, or gone: no label
		}
		ref, _ := s.Catalog.Table(f.IDFromTb)
		col := labelColumn(ref)
		v := lk.vals[i]
		if col == schema.ColID {
			v = lk.ids[i].Int64
		}
		dbt, _ := dbTypeOf(ref, col)
		lk.labels[ref.Name][lk.ids[i].Int64] = labelText(fromDB(dbt, v))
	}
	if len(lk.own) == 0 {
		return nil
	}
	mine := lk.labels[s.Table.Name]
	var ids []int64
	for _, name := range lk.own {
		if n, ok := st.Core[name].(int64); ok {
			if _, ok := mine[n]; !ok {
				ids = append(ids, n)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	again := s.DB.Pipeline()
	if err := s.queueLabels(ctx, again, s.Table, ids, mine); err != nil {
		return err
	}
	return again.Run(ctx)
}

// coreSection gives every field {name, label, val}, plus val_label for
// lookups (null where the caller may not read the referenced record) and
// html for Markdown.
func (s *Scope) coreSection(t *schema.Table, vals map[string]any, labels map[string]map[int64]string) obj {
	core := make(obj, len(t.Fields))
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
	return core
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
		"id_from_tb": f.IDFromTb, "options_source": OptionsSource(f), "vocab_free": f.VocabFree()}
}

// schemaSection is the table's schema as the full record shows it,
// encoded once per catalog and set of plugin flags: it is the largest part
// of a record's answer, and the same for every record of the table.
func (s *Scope) schemaSection() jsonout.Compact {
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
		return jsonout.Compact(b)
	}).(jsonout.Compact)
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
		"has_osteology": false, "template": nil,
		// BraDypUS's record view shows the bibliography when has_zotero.
		"has_zotero": s.Table.RefMgr}
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

// queueLinks queues the count, per referring table the caller may read,
// of the rows it may see that point at the record, in one UNION ALL
// query, with the click-through filter; finish gives the section once
// the pipeline has run.
func (s *Scope) queueLinks(ctx context.Context, p *store.Pipeline, id int64) (finish func() obj, err error) {
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
		return func() obj { return obj{} }, nil
	}
	counts := map[int]int64{}
	p.Query(fmt.Sprintf("links of %s %d", s.Table.Name, id), strings.Join(parts, " UNION ALL "), args, func(rows store.Rows) error {
		for rows.Next() {
			var k string
			var n int64
			if err := rows.Scan(&k, &n); err != nil {
				return err
			}
			i, _ := strconv.Atoi(k)
			counts[i] = n
		}
		return rows.Err()
	})
	return func() obj {
		out := obj{}
		for i, r := range refs {
			ref, _ := s.Catalog.Table(r[0])
			key := r[0]
			if _, dup := out[key]; dup {
				key = r[0] + ":" + r[1]
			}
			out[key] = obj{"tb_id": r[0], "tb_label": ref.Label, "tot": counts[i],
				"filter": obj{r[1]: obj{"_eq": id}}}
		}
		return out
	}, nil
}

// queueBacklinks queues, per configured backlink refTb:viaTb:fkCol, the
// refTb records linked to this one through viaTb.fkCol (one query each),
// within the caller's privilege and row subsets on both tables; finish
// gives the section once the pipeline has run.
func (s *Scope) queueBacklinks(ctx context.Context, p *store.Pipeline, id int64) (finish func() obj, err error) {
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
		dbt, _ := dbTypeOf(ref, label)
		p.Query("backlink "+bl, q, args, func(rows store.Rows) error {
			data := []obj{}
			for rows.Next() {
				var rid int64
				var v any
				if err := rows.Scan(&rid, &v); err != nil {
					return err
				}
				data = append(data, obj{"id": rid, "label": labelText(fromDB(dbt, v))})
			}
			if err := rows.Err(); err != nil {
				return err
			}
			out[refTb] = obj{"tb_id": refTb, "tb_label": ref.Label, "tot": len(data),
				"filter": obj{viaTb: obj{fkCol: obj{"_eq": id}}}, "data": data}
			return nil
		})
	}
	return func() obj { return out }, nil
}
