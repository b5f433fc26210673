package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/strata-archaeo/strata/core/geo"
	"github.com/strata-archaeo/strata/core/publish/crate"
	"github.com/strata-archaeo/strata/core/publish/linkedart"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
)

// tableResource is a table's CSV as the data package describes it.
type tableResource struct {
	name, path, title string
	fields            []crate.Field
	foreignKeys       []crate.ForeignKey
	bytes             int64
	hash              string
}

// column is a published column of a table: a public field, or the id
// and the parent link of a plugin table.
type column struct {
	ref    records.FieldRef
	field  *schema.Field // nil for id and id_link
	target string        // the public table a lookup or id_link refers to
}

// columnsOf are t's published columns: id, the public fields (a lookup
// only when the table it refers to is public too: an id of a private
// table says nothing to a reader and would be a dangling key), and a
// plugin table's link to its parent record.
func (b *build) columnsOf(t *schema.Table) []column {
	cols := []column{{ref: records.FieldRef{Name: schema.ColID, Label: "ID"}}}
	if t.IsPlugin {
		cols = append(cols, column{ref: records.FieldRef{Name: schema.ColIDLink, Label: "Parent record"}, target: t.PluginOf})
	}
	for _, f := range t.Fields {
		c := column{ref: records.FieldRef{Name: f.Name, Label: f.Label}, field: f}
		if f.IDFromTb != "" {
			if _, ok := b.published[f.IDFromTb]; !ok {
				continue
			}
			c.target = f.IDFromTb
		}
		cols = append(cols, c)
	}
	return cols
}

// frictionlessType is a column's Table Schema type.
func frictionlessType(c column) string {
	if c.field == nil {
		return "integer"
	}
	switch c.field.DBType {
	case schema.DBInt:
		return "integer"
	case schema.DBFloat:
		return "number"
	case schema.DBBool:
		return "boolean"
	case schema.DBDate:
		return "date"
	}
	return "string"
}

// tablePass writes one table: its CSV and GeoJSON (to scratch files,
// copied into the zip after the pass) and a JSON-LD file per record
// (straight into the zip), reading the rows once through the public
// scope.
func (b *build) tablePass(t *schema.Table) error {
	sc, err := b.gate.Scope(b.ctx, t.Name)
	if err != nil {
		return err
	}
	cols := b.columnsOf(t)
	names := make([]string, 0, len(cols))
	for _, c := range cols[1:] {
		names = append(names, c.ref.Name)
	}
	exp, err := records.NewExport(sc, records.ExportQuery{Columns: names})
	if err != nil {
		return err
	}
	tc := b.cfg.TableConfig(t.Name)

	csvFile, dropCSV, err := b.tempFile()
	if err != nil {
		return err
	}
	defer dropCSV()
	fields := make([]crate.Field, len(cols))
	res := tableResource{name: t.Name, path: "data/" + t.Name + ".csv", title: t.Label}
	for i, c := range cols {
		fields[i] = crate.Field{Name: c.ref.Name, Title: c.ref.Label, Type: frictionlessType(c)}
		if c.field != nil {
			fields[i].Description = c.field.Help
		}
		if c.target != "" {
			res.foreignKeys = append(res.foreignKeys, crate.ForeignKey{Fields: []string{c.ref.Name},
				Reference: crate.Reference{Resource: c.target, Fields: []string{schema.ColID}}})
		}
	}
	fields[0].Constraints = &crate.Constraints{Required: true, Unique: true}
	res.fields = fields
	cw, err := crate.NewCSV(csvFile, fields)
	if err != nil {
		return err
	}

	var geoFile *os.File
	var geoRows records.RowWriter
	if t.Geodata {
		f, drop, err := b.tempFile()
		if err != nil {
			return err
		}
		defer drop()
		geoFile = f
		if geoRows, err = geo.ExportFormats()[0].NewWriterFor(b.ctx, sc, f); err != nil {
			return err
		}
		defer geoRows.Close()
	}

	rels, err := b.relationsOf(sc)
	if err != nil {
		return err
	}
	images, err := b.loadImages(t)
	if err != nil {
		return err
	}
	w := &tableWriter{b: b, t: t, tc: tc, cols: cols, csv: cw, geo: geoRows, rels: rels, images: images}
	if _, err := exp.Run(b.ctx, w); err != nil {
		return err
	}
	if err := b.writeItems(); err != nil {
		return err
	}
	if err := cw.Close(); err != nil {
		return err
	}
	res.bytes, res.hash = cw.Bytes(), cw.Hash()
	if err := b.addTemp(crateFile{Path: res.path, Name: t.Label + " (table)", Description: "The public fields of the published records of " + t.Label + ".",
		Format: "text/csv", ConformsTo: []string{crate.ProfileFrictionlessTable}}, csvFile); err != nil {
		return err
	}
	b.resources = append(b.resources, res)
	if geoFile != nil {
		if err := b.addTemp(crateFile{Path: "geo/" + t.Name + ".geojson", Name: t.Label + " (geodata)", Description: "The geodata of the published records of " + t.Label + ", WGS 84.",
			Format: "application/geo+json", ConformsTo: []string{crate.ProfileGeoJSON}}, geoFile); err != nil {
			return err
		}
	}
	if !t.RS {
		return nil
	}
	if err := b.relationsResource(t, rels); err != nil {
		return err
	}
	if err := b.matrixFigure(t, rels); err != nil {
		return err
	}
	return b.datesFigure(t, rels)
}

// tableWriter receives the export's rows of one table.
type tableWriter struct {
	b      *build
	t      *schema.Table
	tc     *Table
	cols   []column
	csv    *crate.CSVWriter
	geo    records.RowWriter
	rels   *tableRelations
	images map[int64][]recordImage // the records' images (Table.Images)
}

func (w *tableWriter) Header(cols []records.FieldRef) error {
	if len(cols) != len(w.cols) {
		return fmt.Errorf("publish: %s: %d columns exported, %d expected", w.t.Name, len(cols), len(w.cols))
	}
	if w.geo != nil {
		return w.geo.Header(cols)
	}
	return nil
}

func (w *tableWriter) Row(vals []any) error {
	// A reference to a record that is not published is left empty: it
	// would not resolve, and says only that a hidden record exists.
	for i, c := range w.cols {
		if c.target == "" || vals[i] == nil {
			continue
		}
		if id, ok := vals[i].(int64); !ok || !w.b.published[c.target][id] {
			vals[i] = nil
		}
	}
	if err := w.csv.Row(vals); err != nil {
		return err
	}
	if w.geo != nil {
		if err := w.geo.Row(vals); err != nil {
			return err
		}
	}
	return w.record(vals)
}

func (w *tableWriter) Finish() error {
	if w.geo != nil {
		return w.geo.Finish()
	}
	return nil
}

func (w *tableWriter) Close() error { return nil }

// record writes a record's JSON-LD file and stages its item row.
func (w *tableWriter) record(vals []any) error {
	b := w.b
	id := vals[0].(int64)
	uri := b.recordURI(w.t.Name, id)
	sum := summary{Table: w.t.Name, TableLabel: w.t.Label, Kind: w.tc.Kind, Term: w.tc.Term}
	la := linkedart.Record{URI: uri, Kind: linkedart.Kind(w.tc.Kind), Table: w.t.Name, TableLabel: w.t.Label,
		TableURI: b.fr.BaseURL + "/data/table/" + w.t.Name, VocabBase: b.fr.BaseURL + "/data/vocab/",
		Homepage: uri, Licence: licenceURL(b.cfg.Licence)}
	if la.Kind == "other" {
		la.Kind = linkedart.KindOther
	}
	if w.tc.Term != nil {
		la.Classification = &linkedart.Term{ID: w.tc.Term.ID, Label: w.tc.Term.Label}
	}
	labelField := records.IDFieldOf(w.t)
	sum.Label = w.t.Label + " " + strconv.FormatInt(id, 10)
	for i, c := range w.cols {
		if c.field == nil {
			if c.ref.Name == schema.ColIDLink && vals[i] != nil {
				pid := vals[i].(int64)
				la.PartOf = append(la.PartOf, linkedart.Ref{URI: b.recordURI(c.target, pid), Label: c.target + " " + strconv.FormatInt(pid, 10)})
			}
			continue
		}
		v := vals[i]
		if v == nil || v == "" {
			continue
		}
		if c.ref.Name == labelField {
			sum.Label = fmt.Sprint(v)
			la.Identifier = sum.Label
		}
		sf := summaryField{Name: c.ref.Name, Label: c.ref.Label, Value: v}
		if c.target != "" {
			sf.Link = b.recordURI(c.target, v.(int64))
		}
		sum.Fields = append(sum.Fields, sf)
		if c.ref.Name != labelField {
			la.Fields = append(la.Fields, linkedart.Field{Name: c.ref.Name, Label: c.ref.Label, Value: v})
		}
	}
	la.Label = sum.Label
	w.roles(&la, vals)
	if imgs := w.images[id]; len(imgs) > 0 {
		// The images go into the zip before the record's document, which
		// names the manifest only when one was written.
		ok, err := b.writeRecordImages(w.t, id, sum.Label, imgs)
		if err != nil {
			return err
		}
		if ok {
			la.Images = []linkedart.Ref{{URI: b.manifestURI(w.t.Name, id), Label: sum.Label + " (IIIF manifest)"}}
		}
	}
	if w.rels != nil {
		for _, r := range w.rels.of[id] {
			target := b.recordURI(w.t.Name, r.other)
			la.Relations = append(la.Relations, linkedart.Relation{Type: relationKeys[r.code], TypeLabel: records.RelationNames[r.code],
				TargetURI: target, TargetLabel: w.rels.labels[r.other]})
			sum.Relations = append(sum.Relations, summaryRel{Relation: records.RelationNames[r.code], Target: target, Label: w.rels.labels[r.other]})
		}
		for _, d := range w.rels.dates[id] {
			la.Radiocarbon = append(la.Radiocarbon, d)
		}
	}
	doc, err := linkedart.Encode(la)
	if err != nil {
		return fmt.Errorf("publish: %s %d: %w", w.t.Name, id, err)
	}
	path := "records/" + w.t.Name + "/" + strconv.FormatInt(id, 10) + ".json"
	if err := b.add(crateFile{Path: path, Name: sum.Label, Format: "application/ld+json", ConformsTo: []string{crate.ProfileLinkedArt}},
		func(out io.Writer) error { _, err := out.Write(doc); return err }); err != nil {
		return err
	}
	h := sha256.Sum256(doc)
	b.items = append(b.items, item{tb: w.t.Name, rid: id, hash: hex.EncodeToString(h[:]), summary: mustJSON(sum), doc: doc})
	b.records++
	b.step()
	if len(b.items) >= records.ExportBatch {
		return b.writeItems()
	}
	return nil
}

// relationKeys are the relation types' keys in the Linked Art documents.
var relationKeys = map[int]string{1: "covered_by", 2: "cut_by", 3: "carries", 4: "filled_by", 5: "covers", 6: "cuts",
	7: "leans_against", 8: "fills", 9: "same_as", 10: "bound_to"}

// tableRelations are a table's relations among published records, by
// record, with the records' labels and radiocarbon dates.
type tableRelations struct {
	all    []records.CheckRelation
	of     map[int64][]relTo
	labels map[int64]string
	dates  map[int64][]linkedart.C14
}

type relTo struct {
	code  int
	other int64
}

// relationsOf reads the relations through the public scope: the records
// gate keeps only those whose two records are published.
func (b *build) relationsOf(sc *records.Scope) (*tableRelations, error) {
	if !sc.Table.RS {
		return nil, nil
	}
	d, err := records.ReadMatrixCheck(b.ctx, sc)
	if err != nil {
		return nil, err
	}
	tr := &tableRelations{all: d.Relations, of: map[int64][]relTo{}, labels: map[int64]string{}, dates: map[int64][]linkedart.C14{}}
	for _, u := range d.Units {
		tr.labels[u.ID] = u.Label
	}
	for _, r := range d.Relations {
		tr.of[r.First] = append(tr.of[r.First], relTo{code: r.Relation, other: r.Second})
		tr.of[r.Second] = append(tr.of[r.Second], relTo{code: records.InverseRelation(r.Relation), other: r.First})
	}
	// Only dates whose own row is published: the child table's filter
	// may leave some out.
	dated := b.published[sc.Table.Features[records.RadiocarbonFeature].ChildTable]
	for _, dt := range d.Dates {
		if !dated[dt.ID] {
			continue
		}
		// Cal BP to astronomical years: 1950 − BP.
		tr.dates[dt.Unit] = append(tr.dates[dt.Unit], linkedart.C14{LabCode: dt.LabCode,
			Calibrated: []linkedart.Range{{From: int(1950 - dt.Cal2To), To: int(1950 - dt.Cal2From), Probability: 0.954}}})
	}
	return tr, nil
}

// relationsResource writes a table's relations as a CSV whose two ends
// are foreign keys into the table.
func (b *build) relationsResource(t *schema.Table, tr *tableRelations) error {
	fields := []crate.Field{
		{Name: "id", Title: "ID", Type: "integer", Constraints: &crate.Constraints{Required: true, Unique: true}},
		{Name: "first", Title: "Record", Type: "integer", Constraints: &crate.Constraints{Required: true}},
		{Name: "relation", Title: "Relation", Type: "string", Constraints: &crate.Constraints{Required: true}},
		{Name: "second", Title: "Related record", Type: "integer", Constraints: &crate.Constraints{Required: true}},
	}
	res := tableResource{name: t.Name + "_relations", path: "data/" + t.Name + "_relations.csv", title: t.Label + ": stratigraphic relations", fields: fields,
		foreignKeys: []crate.ForeignKey{
			{Fields: []string{"first"}, Reference: crate.Reference{Resource: t.Name, Fields: []string{"id"}}},
			{Fields: []string{"second"}, Reference: crate.Reference{Resource: t.Name, Fields: []string{"id"}}},
		}}
	var cw *crate.CSVWriter
	err := b.add(crateFile{Path: res.path, Name: res.title, Description: "Each row: record, relation, related record (the relation read from the first to the second).",
		Format: "text/csv", ConformsTo: []string{crate.ProfileFrictionlessTable}}, func(w io.Writer) error {
		var err error
		if cw, err = crate.NewCSV(w, fields); err != nil {
			return err
		}
		for _, r := range tr.all {
			if err := cw.Row([]any{r.ID, r.First, records.RelationNames[r.Relation], r.Second}); err != nil {
				return err
			}
		}
		return cw.Close()
	})
	if err != nil {
		return err
	}
	res.bytes, res.hash = cw.Bytes(), cw.Hash()
	b.resources = append(b.resources, res)
	return nil
}

// licenceURL is the URL of a licence id.
func licenceURL(id string) string {
	l, _ := LicenceOf(id)
	return l.URL
}

// roles moves the values of fields with a role to their own place in the
// Linked Art document: the material, the measurements, and the
// chronology plugin's dating as the production's time-span when its
// fields are public.
func (w *tableWriter) roles(la *linkedart.Record, vals []any) {
	at := map[string]any{}
	for i, c := range w.cols {
		at[c.ref.Name] = vals[i]
	}
	used := map[string]bool{}
	if r := w.tc.Roles; r != nil {
		if v, ok := at[r.Material].(string); ok && v != "" {
			la.Material = append(la.Material, linkedart.Term{Label: v})
			used[r.Material] = true
		}
		for _, d := range r.Dimensions {
			var x float64
			switch v := at[d.Field].(type) {
			case int64:
				x = float64(v)
			case float64:
				x = v
			default:
				continue
			}
			la.Dimensions = append(la.Dimensions, linkedart.Dimension{Type: linkedart.Term{ID: d.Type.ID, Label: d.Type.Label}, Value: x,
				Unit: linkedart.Term{ID: d.Unit.ID, Label: d.Unit.Label}})
			used[d.Field] = true
		}
	}
	if w.t.Active(schema.ChronologyFeature) && w.tc.Kind != "site" {
		from, okF := at["chrono_from"].(int64)
		to, okT := at["chrono_to"].(int64)
		label, _ := at["chrono_label"].(string)
		if okF || okT || label != "" {
			p := &linkedart.Period{Label: label}
			// The chronology plugin counts years without a year 0 (−500
			// is 500 BCE); Linked Art's are astronomical (−499).
			if okF {
				y := astronomical(from)
				p.Begin = &y
			}
			if okT {
				y := astronomical(to)
				p.End = &y
			}
			if p.Begin == nil || p.End == nil || *p.Begin <= *p.End {
				la.Production = p
				used["chrono_from"], used["chrono_to"], used["chrono_label"] = true, true, true
			}
		}
	}
	if len(used) == 0 {
		return
	}
	kept := la.Fields[:0]
	for _, f := range la.Fields {
		if !used[f.Name] {
			kept = append(kept, f)
		}
	}
	la.Fields = kept
}

// astronomical is a year without a year 0 as an astronomical year.
func astronomical(y int64) int {
	if y < 0 {
		return int(y + 1)
	}
	return int(y)
}
