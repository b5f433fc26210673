package schemaapi

import (
	"github.com/strata-archaeo/strata/core/api"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/wire"
)

var errSortMissing = errs.New(errs.Invalid, "parameter_missing", "sort is required: the full list of names in the new order").
	With("parameter", "sort")

// tableSummary is a row of GET /config/tables.
type tableSummary struct {
	Name     string  `json:"name"`
	Label    string  `json:"label"`
	IsPlugin bool    `json:"is_plugin"`
	PluginOf *string `json:"plugin_of"`
}

// tableView is a table's configuration (CONTRACT §6) in the shape BraDypUS
// clients read: "order" is the records' default sort field and "sort" the
// table's position; "rs" is the field that labels units in relations when
// one is set (else a flag); "plugin" lists its plugin tables; "fields" maps
// each field's name to its configuration.
type tableView struct {
	Name              string               `json:"name"`
	Label             string               `json:"label"`
	Order             string               `json:"order"`
	Sort              int                  `json:"sort"`
	IDField           string               `json:"id_field"`
	Preview           []string             `json:"preview"`
	RS                any                  `json:"rs"`
	RSStrict          bool                 `json:"rs_strict"`
	Geodata           bool                 `json:"geodata"`
	RefMgr            bool                 `json:"refmgr"`
	Zotero            bool                 `json:"zotero"` // RefMgr as BraDypUS's table form reads it (and sends it back on save)
	ChronoDensityPath []string             `json:"chrono_density_path"`
	Backlinks         []string             `json:"backlinks"`
	Link              []schema.TableLink   `json:"link"`
	Plugin            []string             `json:"plugin"`
	IsPlugin          bool                 `json:"is_plugin"`
	PluginOf          *string              `json:"plugin_of"`
	Features          map[string]bool      `json:"features"`
	Chronology        bool                 `json:"chronology,omitempty"` // present only when active, as BraDypUS answers
	Osteology         bool                 `json:"osteology,omitempty"`
	Radiocarbon       bool                 `json:"radiocarbon,omitempty"`
	Fields            map[string]fieldView `json:"fields"`
}

func pluginOf(t *schema.Table) *string {
	if t.PluginOf == "" {
		return nil
	}
	return &t.PluginOf
}

func nonNilList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func viewTable(cat *schema.Catalog, rels []*schema.Relation, t *schema.Table) tableView {
	v := tableView{Name: t.Name, Label: t.Label, Order: t.SortField, Sort: t.Sort, IDField: t.IDField, Preview: nonNilList(t.Preview),
		RS: t.RS, RSStrict: t.RSStrict, Geodata: t.Geodata, RefMgr: t.RefMgr, Zotero: t.RefMgr, ChronoDensityPath: nonNilList(t.ChronoDensityPath),
		Backlinks: nonNilList(t.Backlinks), Link: schema.LinksOf(rels, t.Name), Plugin: []string{}, IsPlugin: t.IsPlugin, PluginOf: pluginOf(t),
		Features: map[string]bool{}, Fields: make(map[string]fieldView, len(t.Fields))}
	if t.RS && t.RSField != "" {
		v.RS = t.RSField
	}
	if cat != nil {
		for _, p := range cat.PluginTables(t.Name) {
			v.Plugin = append(v.Plugin, p.Name)
		}
	}
	for name := range t.Features {
		v.Features[name] = t.Active(name)
	}
	v.Chronology, v.Osteology, v.Radiocarbon = t.Active("chronology"), t.Active("osteology"), t.Active("radiocarbon")
	for _, f := range t.Fields {
		v.Fields[f.Name] = viewField(f)
	}
	return v
}

// fieldLabels maps each field's name to its label: what BraDypUS clients
// read to fill field pickers.
func fieldLabels(t *schema.Table) map[string]string {
	out := make(map[string]string, len(t.Fields))
	for _, f := range t.Fields {
		out[f.Name] = f.Label
	}
	return out
}

// configTable loads the catalog and the table named by :tb.
func configTable(c *gin.Context) (*schema.Catalog, *schema.Table, error) {
	cat, err := schema.Load(c.Request.Context(), api.AppOf(c).DB)
	if err != nil {
		return nil, nil, err
	}
	t, ok := cat.Table(c.Param("tb"))
	if !ok {
		return nil, nil, schema.ErrTableNotFound.With("table", c.Param("tb"))
	}
	return cat, t, nil
}

// reloadView reads the catalog again after a change, for the answer.
func reloadView(c *gin.Context, name string) tableView {
	cat, err := schema.Load(c.Request.Context(), api.AppOf(c).DB)
	if err != nil {
		return tableView{Name: name}
	}
	t, _ := cat.Table(name)
	if t == nil {
		return tableView{Name: name}
	}
	rels, _ := schema.ListAllRelations(c.Request.Context(), api.AppOf(c).DB)
	return viewTable(cat, rels, t)
}

// cascadeParam reads ?cascade=1 (also true, yes).
func cascadeParam(c *gin.Context) bool {
	b, _ := wire.Bool(c.Query("cascade"))
	return b
}

// sortBody reads {sort:[names]}.
func sortBody(c *gin.Context) ([]string, error) {
	var body struct {
		Sort *[]string `json:"sort"`
	}
	if err := api.Bind(c, &body); err != nil {
		return nil, err
	}
	if body.Sort == nil {
		return nil, errSortMissing
	}
	return *body.Sort, nil
}

// GET /config/tables
func (h handlers) listTables(c *gin.Context) {
	cat, err := schema.Load(c.Request.Context(), api.AppOf(c).DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	out := make([]tableSummary, len(cat.Tables))
	for i, t := range cat.Tables {
		out[i] = tableSummary{Name: t.Name, Label: t.Label, IsPlugin: t.IsPlugin, PluginOf: pluginOf(t)}
	}
	api.Success(c, http.StatusOK, gin.H{"tables": out})
}

// POST /config/tables — {name, label, is_plugin?, plugin_of?}
func (h handlers) createTable(c *gin.Context) {
	var def schema.TableDef
	if err := api.Bind(c, &def); err != nil {
		api.Fail(c, err)
		return
	}
	t, err := schema.CreateTable(c.Request.Context(), api.AppOf(c).DB, def, h.now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	// "tb" is the created table's name as BraDypUS answers it.
	api.Success(c, http.StatusOK, gin.H{"code": "table_created", "tb": t.Name, "table": reloadView(c, t.Name)})
}

// POST /config/tables/sort — {sort:[every table name, in order]}
func (h handlers) sortTables(c *gin.Context) {
	names, err := sortBody(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if err := schema.SortTables(c.Request.Context(), api.AppOf(c).DB, names, h.now().UTC()); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "tables_sorted"})
}

// GET /config/table/{tb} — the table's configuration and its fields.
func (h handlers) getTable(c *gin.Context) {
	cat, t, err := configTable(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	chrono := []string{}
	for _, o := range cat.Tables {
		if o.Active(schema.ChronologyFeature) {
			chrono = append(chrono, o.Name)
		}
	}
	rels, err := schema.ListAllRelations(c.Request.Context(), api.AppOf(c).DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"table": viewTable(cat, rels, t), "fields": viewFields(t.Fields),
		"field_labels": fieldLabels(t), "chronology_tables": chrono, "fuzzy_date_tables": chrono})
}

// PUT /config/table/{tb} — the settings sent change, the others stay.
func (h handlers) putTable(c *gin.Context) {
	var in schema.TableConfig
	if err := api.Bind(c, &in); err != nil {
		api.Fail(c, err)
		return
	}
	t, err := schema.PutTable(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), in, h.now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "table_saved", "table": reloadView(c, t.Name)})
}

// DELETE /config/table/{tb}[?cascade=1]
func (h handlers) deleteTable(c *gin.Context) {
	del, err := schema.DeleteTable(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), cascadeParam(c), h.now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_cfg_tb_delete", "dropped": del.Dropped, "removed": del.Removed})
}

// GET /config/table/{tb}/deletion — what DELETE would remove and keep,
// counted, so that an admin sees it before confirming.
func (h handlers) previewDeletion(c *gin.Context) {
	p, err := schema.PreviewTableDeletion(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"deletion": p})
}

// PATCH /config/table/{tb} — {new_name}: rename.
func (h handlers) renameTable(c *gin.Context) {
	var body struct {
		NewName string `json:"new_name"`
	}
	if err := api.Bind(c, &body); err != nil {
		api.Fail(c, err)
		return
	}
	renamed, err := schema.RenameTable(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), body.NewName, h.now().UTC())
	if err != nil {
		api.Fail(c, renameConflict(err, "error_renaming_table"))
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_renaming_table", "name": renamed[0].To, "renamed": renamed})
}

// GET /config/table/{tb}/validation — differences between the catalog and
// the physical table (an empty list when they agree).
func (h handlers) validateTable(c *gin.Context) {
	diffs, err := schema.ValidateTable(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"table": c.Param("tb"), "consistent": len(diffs) == 0, "differences": diffs})
}

// renameConflict answers a rename onto a taken name with BraDypUS's code for
// it (the name is still given); other errors pass unchanged.
func renameConflict(err error, code string) error {
	if e, ok := errs.As(err); ok && e.Kind == errs.Conflict {
		out := *e
		out.Code = code
		return &out
	}
	return err
}
