package schemaapi

import (
	"github.com/strata-archaeo/strata/core/api"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/schema"
)

// fieldView is a field's configuration: every key of schema.FieldDef, plus
// its id, sort position and where a select takes its values (CONTRACT §8).
type fieldView struct {
	ID              int64                 `json:"id"`
	Name            string                `json:"name"`
	Label           string                `json:"label"`
	Type            schema.FieldType      `json:"type"`
	DBType          schema.DBType         `json:"db_type"`
	Sort            int                   `json:"sort"`
	Readonly        bool                  `json:"readonly"`
	Hide            bool                  `json:"hide"`
	VocabularySet   string                `json:"vocabulary_set"`
	GetValuesFromTb string                `json:"get_values_from_tb"`
	IDFromTb        string                `json:"id_from_tb"`
	Widget          string                `json:"widget"`
	Required        bool                  `json:"required"`
	Unique          bool                  `json:"unique"`
	Min             any                   `json:"min"` // a number, or a date for a date field
	Max             any                   `json:"max"`
	MaxLength       *int                  `json:"max_length"`
	Pattern         string                `json:"pattern"`
	DefValue        string                `json:"def_value"`
	Help            string                `json:"help"`
	Disabled        bool                  `json:"disabled"`
	OptionsSource   *schema.OptionsSource `json:"options_source"`
	Check           []string              `json:"check"`
	Dic             []string              `json:"dic"`
	LinkSchemes     []string              `json:"link_schemes,omitempty"` // link_out fields
	// VocabFree: a select bound to a vocabulary also takes other values.
	VocabFree bool `json:"vocab_free"`
	// SearchIndex is the field's search_index setting (null: a search
	// index while it is a preview field); SearchIndexed whether the index
	// exists now (text storage only; on PostgreSQL only with pg_trgm).
	SearchIndex   *bool `json:"search_index"`
	SearchIndexed bool  `json:"search_indexed"`
}

func viewField(f *schema.Field) fieldView {
	disabled, _ := f.Extra["disabled"].(bool)
	v := fieldView{ID: f.ID, Name: f.Name, Label: f.Label, Type: f.Type, DBType: f.DBType, Sort: f.Sort,
		Readonly: f.Readonly, Hide: f.Hide, VocabularySet: f.VocabularySet, GetValuesFromTb: f.GetValuesFromTb,
		IDFromTb: f.IDFromTb, Widget: f.Widget, Required: f.Required, Unique: f.Unique, Min: f.Min, Max: f.Max,
		MaxLength: f.MaxLength, Pattern: f.Pattern, DefValue: f.DefValue, Help: f.Help, Disabled: disabled,
		OptionsSource: f.OptionsSource(), Check: f.ChecksOf(), Dic: f.Dic(), SearchIndexed: f.SearchIndexed, VocabFree: f.VocabFree()}
	if on, set := f.SearchIndexSetting(); set {
		v.SearchIndex = &on
	}
	if f.Type == schema.TypeLinkOut {
		v.LinkSchemes = f.LinkSchemes()
	}
	if f.Min == nil {
		v.Min = nil
		if d := f.DateBound("min"); d != "" {
			v.Min = d
		}
	}
	if f.Max == nil {
		v.Max = nil
		if d := f.DateBound("max"); d != "" {
			v.Max = d
		}
	}
	return v
}

func viewFields(fields []*schema.Field) []fieldView {
	out := make([]fieldView, len(fields))
	for i, f := range fields {
		out[i] = viewField(f)
	}
	return out
}

// GET /config/table/{tb}/fields
func (h handlers) listFields(c *gin.Context) {
	_, t, err := configTable(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	// "fields" maps names to labels, as BraDypUS clients read it; "data"
	// has every field's configuration, in order.
	api.Success(c, http.StatusOK, gin.H{"fields": fieldLabels(t), "data": viewFields(t.Fields)})
}

// POST /config/table/{tb}/field — body: schema.FieldDef.
func (h handlers) addField(c *gin.Context) {
	var def schema.FieldDef
	if err := api.Bind(c, &def); err != nil {
		api.Fail(c, err)
		return
	}
	def.CheckWidget = true
	f, err := schema.AddField(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), def, h.now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "field_created", "fld": f.Name, "field": viewField(f)})
}

// PUT /config/table/{tb}/field/{fld} — the settings sent change.
func (h handlers) putField(c *gin.Context) {
	var in schema.FieldUpdate
	if err := api.Bind(c, &in); err != nil {
		api.Fail(c, err)
		return
	}
	in.CheckWidget = true
	f, err := schema.PutField(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), c.Param("fld"), in, h.now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "field_saved", "field": viewField(f)})
}

// DELETE /config/table/{tb}/field/{fld}[?cascade=1]
func (h handlers) deleteField(c *gin.Context) {
	removed, err := schema.DeleteField(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), c.Param("fld"), cascadeParam(c), h.now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_cfg_column_delete", "removed": removed})
}

// PATCH /config/table/{tb}/field/{fld} — {new_name}: rename.
func (h handlers) renameField(c *gin.Context) {
	var body struct {
		NewName string `json:"new_name"`
	}
	if err := api.Bind(c, &body); err != nil {
		api.Fail(c, err)
		return
	}
	f, err := schema.RenameField(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), c.Param("fld"), body.NewName, h.now().UTC())
	if err != nil {
		api.Fail(c, renameConflict(err, "error_renaming_column"))
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_renaming_column", "field": viewField(f)})
}

// POST /config/table/{tb}/fields/sort — {sort:[every field name, in order]}
func (h handlers) sortFields(c *gin.Context) {
	names, err := sortBody(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if err := schema.SortFields(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), names, h.now().UTC()); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "fields_sorted"})
}

// GET /config/field-structure — the settings a field definition takes,
// for editors built from it (BraDypUS's fld_structure): {structure:{key:
// {type, values?, help, required, readonly?, pattern?}}} in editor order.
func (h handlers) fieldStructure(c *gin.Context) {
	ctx := c.Request.Context()
	db := api.AppOf(c).DB
	cat, err := schema.Load(ctx, db)
	if err != nil {
		api.Fail(c, err)
		return
	}
	st, err := schema.FieldStructure(ctx, db, cat)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"structure": st})
}
