package schema

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

// FieldUpdate is the body of PUT /config/table/{tb}/field/{fld}: only keys
// present change; null clears (min, max, max_length, texts). type and
// db_type sent empty or null keep the stored value; db_type changes only
// when sent, converting the data (see convertColumn). A type that is no
// longer a select drops vocabulary_set, get_values_from_tb and id_from_tb.
// The name is changed by RenameField, never here.
type FieldUpdate struct {
	Label           Patch[string]    `json:"label"`
	Type            Patch[string]    `json:"type"`
	DBType          Patch[string]    `json:"db_type"`
	Readonly        Patch[bool]      `json:"readonly"`
	Hide            Patch[bool]      `json:"hide"`
	VocabularySet   Patch[string]    `json:"vocabulary_set"`
	GetValuesFromTb Patch[string]    `json:"get_values_from_tb"`
	IDFromTb        Patch[string]    `json:"id_from_tb"`
	Widget          Patch[string]    `json:"widget"`
	Required        Patch[bool]      `json:"required"`
	Unique          Patch[bool]      `json:"unique"`
	Min             Patch[*float64]  `json:"min"`
	Max             Patch[*float64]  `json:"max"`
	MaxLength       Patch[*int]      `json:"max_length"`
	Pattern         Patch[string]    `json:"pattern"`
	DefValue        Patch[string]    `json:"def_value"`
	Help            Patch[string]    `json:"help"`
	Disabled        Patch[bool]      `json:"disabled"`
	Check           Patch[wire.List] `json:"check"`
	Dic             Patch[wire.List] `json:"dic"`
	LinkSchemes     Patch[wire.List] `json:"link_schemes"`
	SearchIndex     Patch[*bool]     `json:"search_index"`
	VocabFree       Patch[bool]      `json:"vocab_free"`
	DateMin         Patch[string]    `json:"-"`
	DateMax         Patch[string]    `json:"-"`
	// CheckWidget asks that a changed Widget name an installed widget
	// (as FieldDef.CheckWidget).
	CheckWidget bool `json:"-"`
}

// defOf is the FieldDef that would create f as it is now.
func defOf(f *Field) FieldDef {
	disabled, _ := f.Extra["disabled"].(bool)
	return FieldDef{
		Name: f.Name, Label: f.Label, Type: string(f.Type), DBType: string(f.DBType), Readonly: f.Readonly && !disabled,
		Hide: f.Hide, VocabularySet: f.VocabularySet, GetValuesFromTb: f.GetValuesFromTb, IDFromTb: f.IDFromTb,
		Widget: f.Widget, Required: f.Required, Unique: f.Unique, Min: f.Min, Max: f.Max, MaxLength: f.MaxLength,
		Pattern: f.Pattern, DefValue: f.DefValue, Help: f.Help, Disabled: disabled,
		Check: stringsOf(f.Extra["check"]), Dic: f.Dic(), DateMin: f.DateBound("min"), DateMax: f.DateBound("max"),
		LinkSchemes: stringsOf(f.Extra["link_schemes"]), SearchIndex: searchIndexPtr(f),
		VocabFree: f.VocabFree(),
	}
}

func (in *FieldUpdate) applyTo(def *FieldDef) {
	in.Label.apply(&def.Label)
	if in.Type.Value != "" {
		in.Type.apply(&def.Type)
	}
	if in.DBType.Value != "" {
		in.DBType.apply(&def.DBType)
	}
	in.Readonly.apply(&def.Readonly)
	if in.Readonly.Set && !in.Readonly.Value && !in.Disabled.Set {
		def.Disabled = false // asking for an editable field also lifts a legacy disabled
	}
	in.Hide.apply(&def.Hide)
	in.VocabularySet.apply(&def.VocabularySet)
	in.GetValuesFromTb.apply(&def.GetValuesFromTb)
	in.IDFromTb.apply(&def.IDFromTb)
	in.Widget.apply(&def.Widget)
	in.Required.apply(&def.Required)
	in.Unique.apply(&def.Unique)
	in.Min.apply(&def.Min)
	in.Max.apply(&def.Max)
	in.MaxLength.apply(&def.MaxLength)
	in.Pattern.apply(&def.Pattern)
	in.DefValue.apply(&def.DefValue)
	in.Help.apply(&def.Help)
	in.Disabled.apply(&def.Disabled)
	in.Check.apply(&def.Check)
	in.Dic.apply(&def.Dic)
	in.LinkSchemes.apply(&def.LinkSchemes)
	in.SearchIndex.apply(&def.SearchIndex)
	in.VocabFree.apply(&def.VocabFree)
	in.DateMin.apply(&def.DateMin)
	in.DateMax.apply(&def.DateMax)
	if in.Min.Set && !in.DateMin.Set {
		def.DateMin = "" // a numeric min (or null) replaces a date one
	}
	if in.Max.Set && !in.DateMax.Set {
		def.DateMax = ""
	}
	// A field that stops being a select drops the value source it had,
	// unless the body names one (which checkFieldDef then refuses).
	if !FieldType(def.Type).IsSelect() {
		for _, p := range []struct {
			sent bool
			dst  *string
		}{{in.VocabularySet.Set, &def.VocabularySet}, {in.GetValuesFromTb.Set, &def.GetValuesFromTb}, {in.IDFromTb.Set, &def.IDFromTb}} {
			if !p.sent {
				*p.dst = ""
			}
		}
	}
}

// PutField changes a field's settings and, with them, its column: a unique
// index added or dropped, a lookup's index, a db_type converted with the
// data. The merged definition is validated as AddField validates a new one.
func PutField(ctx context.Context, db *store.DB, table, field string, in FieldUpdate, now time.Time) (*Field, error) {
	var out *Field
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		t, ok := st.cat.Table(table)
		if !ok {
			return ErrTableNotFound
		}
		f, ok := t.Field(field)
		if !ok {
			return ErrFieldNotFound
		}
		def := defOf(f)
		in.applyTo(&def)
		others := *t
		others.Fields = nil
		for _, o := range t.Fields {
			if o.ID != f.ID {
				others.Fields = append(others.Fields, o)
			}
		}
		nf, err := checkFieldDef(st.cat, &others, &def)
		if err == nil && in.CheckWidget && nf.Widget != f.Widget {
			// Only a changed widget is checked: a field keeps working
			// after its widget is deleted.
			err = checkWidget(ctx, tx, nf.Widget)
		}
		if err != nil {
			return err
		}
		nf.ID, nf.Sort, nf.Extra = f.ID, f.Sort, maps.Clone(f.Extra)
		def.legacyExtra(nf.Extra)
		if err := def.applyDateBounds(nf.DBType, nf.Extra); err != nil {
			return err
		}
		if err := def.applyLinkSchemes(nf.Type, nf.Extra); err != nil {
			return err
		}
		def.applySearchIndex(nf.Extra)
		def.applyVocabFree(nf.Type, nf.Extra)
		delete(nf.Extra, "disabled")
		if def.Disabled {
			nf.Extra["disabled"] = true
		}
		if err := checkFieldChange(st, t, f, nf); err != nil {
			return err
		}
		before := f.indexKind()
		if nf.DBType != f.DBType {
			dropped, err := convertColumn(ctx, tx, st, t, f, nf.DBType)
			if err != nil {
				return err
			}
			if dropped {
				before = noIndex
			}
		}
		if err := setFieldIndex(ctx, tx, nf, t, before, nf.indexKind()); err != nil {
			return err
		}
		if err := updateFieldRow(ctx, tx, nf, now); err != nil {
			return err
		}
		out = nf
		return nil
	})
	if err == nil {
		err = markSearchIndexes(ctx, db, []*Table{{Fields: []*Field{out}}})
	}
	return out, err
}

// checkFieldChange refuses changes that would break a reference: the
// column of a relation keeps its type (and a referenced one its unique
// index), and a lookup that a backlink relies on keeps its target unless
// a relation also carries the link.
func checkFieldChange(st *state, t *Table, f, nf *Field) error {
	rels := fieldRelationUsages(st, t, f)
	if nf.DBType != f.DBType && len(rels) > 0 {
		return ErrFieldInUse.With("used_by", rels).With("detail", "a relation's column keeps its db_type")
	}
	if f.Unique && !nf.Unique {
		for _, r := range st.relations {
			if r.ToTb == t.Name && r.ToCol == f.Name {
				return ErrFieldInUse.With("used_by", []Usage{{Kind: UseRelation, Table: r.FromTb, Field: r.FromCol, Relation: r.ID}}).
					With("detail", "a relation references this field, which must stay unique")
			}
		}
	}
	if f.IDFromTb != "" && nf.IDFromTb != f.IDFromTb {
		if target, ok := st.cat.Table(f.IDFromTb); ok {
			var uses []Usage
			for _, s := range target.Backlinks {
				b, ok := ParseBacklink(s)
				if !ok || b.ViaTb != t.Name || b.FkCol != f.Name {
					continue
				}
				if !referencesTable(st, t, &Field{Name: f.Name}, target.Name) {
					uses = append(uses, Usage{Kind: UseBacklink, Table: target.Name, Value: s})
				}
			}
			if len(uses) > 0 {
				return ErrFieldInUse.With("used_by", uses).With("detail", "a backlink follows this lookup")
			}
		}
	}
	return nil
}

// updateFieldRow writes every setting of f (not its name or table).
func updateFieldRow(ctx context.Context, tx *store.DB, f *Field, now time.Time) error {
	r := fieldToRow(f, now)
	_, err := tx.Exec(ctx, `UPDATE `+tx.Sys("fields")+` SET label = ?, type = ?, db_type = ?, readonly = ?, hide = ?,
		vocabulary_set = ?, get_values_from_tb = ?, id_from_tb = ?, widget = ?, required = ?, is_unique = ?,
		min_value = ?, max_value = ?, max_length = ?, pattern = ?, def_value = ?, help = ?, extra = ?, updated_at = ?
		WHERE id = ?`, r.Label, r.Type, r.DBType, r.Readonly, r.Hide, r.VocabularySet, r.GetValuesFromTb, r.IDFromTb,
		r.Widget, r.Required, r.Unique, r.Min, r.Max, r.MaxLength, r.Pattern, r.DefValue, r.Help, r.Extra, now, f.ID)
	if err != nil {
		return fmt.Errorf("update field %s: %w", f.Name, err)
	}
	return nil
}
