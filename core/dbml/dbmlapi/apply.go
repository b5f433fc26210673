package dbmlapi

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/strata-archaeo/strata/core/dbml"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/vocab"
)

// FeatureLookup finds the specification of a plugin feature that can be
// activated now (its plugin loaded and running); nil: none can.
type FeatureLookup func(name string) (schema.FeatureSpec, bool)

// VocabularyResult is what an apply added to a vocabulary.
type VocabularyResult struct {
	Name  string   `json:"name"`
	Added []string `json:"added"`
}

// RelationResult is a relation an apply created.
type RelationResult struct {
	ID      int64  `json:"id"`
	FromTb  string `json:"from_tb"`
	FromCol string `json:"from_col"`
	ToTb    string `json:"to_tb"`
	ToCol   string `json:"to_col"`
}

// Result is what an apply did: the tables created and skipped (in the
// text's order), why each was skipped, and what else was added.
type Result struct {
	Created      []string            `json:"created"`
	Skipped      []string            `json:"skipped"`
	Errors       []Issue             `json:"errors"`
	Warnings     []Issue             `json:"warnings"`
	Vocabularies []*VocabularyResult `json:"vocabularies"`
	Relations    []*RelationResult   `json:"relations"`

	// Internal are the causes of internal_error issues, for the log.
	Internal []error `json:"-"`
}

// fail records err as an issue (and, when it has no code, its cause).
func (r *Result) fail(err error, at dbml.Pos, table, field string) {
	if e, ok := errs.As(err); !ok || e.Kind == errs.Internal {
		r.Internal = append(r.Internal, err)
	}
	r.Errors = append(r.Errors, issueOf(err, at, table, field))
}

// Apply creates what the plan of s allows: the vocabulary items, then each
// table with its fields, settings, indexes and plugin features in one
// transaction per table (a table that fails leaves nothing behind and is
// listed as skipped with its error), then the relations, each in its own
// transaction. The created tables keep the text's order in the list of
// tables.
func Apply(ctx context.Context, db *store.DB, s *dbml.Schema, features FeatureLookup, now time.Time) (*Result, error) {
	p, err := MakePlan(ctx, db, s)
	if err != nil {
		return nil, err
	}
	res := &Result{Created: []string{}, Skipped: []string{}, Errors: []Issue{}, Warnings: slices.Clone(p.Warnings),
		Vocabularies: []*VocabularyResult{}, Relations: []*RelationResult{}}
	for _, v := range p.Vocabularies {
		if len(v.Errors) > 0 {
			res.Errors = append(res.Errors, v.Errors...)
			continue
		}
		added, err := addVocabulary(ctx, db, v)
		if err != nil {
			if _, coded := errs.As(err); !coded && ctx.Err() != nil {
				return nil, err
			}
			res.fail(err, dbml.Pos{Line: v.Line, Column: v.Column}, "", "")
			continue
		}
		res.Vocabularies = append(res.Vocabularies, &VocabularyResult{Name: v.Name, Added: added})
	}
	created := map[string]bool{}
	for _, tp := range p.order {
		if !tp.ok() {
			res.Errors = append(res.Errors, tp.Errors...)
			continue
		}
		var warnings []Issue
		err := db.Tx(ctx, func(tx *store.DB) error {
			var err error
			warnings, err = createTable(ctx, tx, tp, features, now)
			return err
		})
		if err != nil {
			if _, coded := errs.As(err); !coded && ctx.Err() != nil {
				return nil, err
			}
			res.fail(err, tp.pos(), tp.Name, "")
			continue
		}
		created[tp.Name] = true
		res.Warnings = append(res.Warnings, tp.Warnings...)
		res.Warnings = append(res.Warnings, warnings...)
	}
	for _, tp := range p.Tables {
		if created[tp.Name] {
			res.Created = append(res.Created, tp.Name)
		} else {
			res.Skipped = append(res.Skipped, tp.Name)
		}
	}
	for _, rp := range p.Relations {
		at := dbml.Pos{Line: rp.Line, Column: rp.Column}
		if len(rp.Errors) > 0 {
			res.Errors = append(res.Errors, rp.Errors...)
			continue
		}
		r, err := schema.AddRelation(ctx, db, schema.RelationInput{FromTb: rp.FromTb, FromCol: rp.FromCol, ToTb: rp.ToTb,
			ToCol: rp.ToCol, OnDelete: rp.OnDelete, OnUpdate: rp.OnUpdate}, now)
		if err != nil {
			if _, coded := errs.As(err); !coded && ctx.Err() != nil {
				return nil, err
			}
			res.fail(err, at, rp.FromTb, rp.FromCol)
			continue
		}
		res.Relations = append(res.Relations, &RelationResult{ID: r.ID, FromTb: r.FromTb, FromCol: r.FromCol, ToTb: r.ToTb, ToCol: r.ToCol})
	}
	if len(res.Created) > 0 {
		if err := keepTextOrder(ctx, db, res.Created, now); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func addVocabulary(ctx context.Context, db *store.DB, v *VocabularyPlan) ([]string, error) {
	added := []string{}
	err := db.Tx(ctx, func(tx *store.DB) error {
		for _, val := range v.New {
			if _, err := vocab.Add(ctx, tx, v.Name, val); err != nil {
				if errors.Is(err, vocab.ErrItemExists) {
					continue // listed twice in the text after trimming
				}
				return err
			}
			added = append(added, val)
		}
		return nil
	})
	return added, err
}

// createTable makes one planned table inside tx, through the same
// catalog operations the configuration routes use.
func createTable(ctx context.Context, tx *store.DB, tp *TablePlan, features FeatureLookup, now time.Time) ([]Issue, error) {
	if _, err := schema.CreateTable(ctx, tx, schema.TableDef{Name: tp.Name, Label: tp.Label, IsPlugin: tp.IsPlugin, PluginOf: tp.PluginOf}, now); err != nil {
		return nil, err
	}
	for _, f := range tp.Fields {
		if _, err := schema.AddField(ctx, tx, tp.Name, f.def, now); err != nil {
			return nil, err
		}
	}
	// id is what an unset id_field and order mean: stored unset, as a
	// table made through the configuration routes has them.
	idField, order := tp.IDField, tp.Order
	if idField == schema.ColID {
		idField = ""
	}
	if order == schema.ColID {
		order = ""
	}
	cfg := schema.TableConfig{Preview: schema.Set(tp.Preview), IDField: schema.Set(idField)}
	cfg.Order = schema.Set(schema.OrderSetting{Field: &order})
	if !tp.IsPlugin {
		cfg.RS = schema.Set(schema.RSSetting{On: tp.RS, Field: tp.rsField})
		cfg.Geodata, cfg.RefMgr = schema.Set(tp.Geodata), schema.Set(tp.RefMgr)
	}
	if _, err := schema.PutTable(ctx, tx, tp.Name, cfg, now); err != nil {
		return nil, err
	}
	for _, ix := range tp.Indexes {
		if _, err := schema.CreateIndex(ctx, tx, tp.Name, schema.IndexInput{Columns: ix.Columns, Unique: ix.Unique, Name: ix.Name}, now); err != nil {
			return nil, err
		}
	}
	var warnings []Issue
	for _, name := range tp.Features {
		if name == "fuzzy_date" || name == "fuzzy-date" {
			name = "chronology"
		}
		var spec schema.FeatureSpec
		ok := false
		if features != nil {
			spec, ok = features(name)
		}
		if !ok {
			warnings = append(warnings, issue("feature_unavailable", tp.pos(), tp.Name, "", "feature %s is not activated: no running plugin offers it; activate it later with POST /config/table/%s/%s", name, tp.Name, name))
			continue
		}
		if err := schema.ActivateFeature(ctx, tx, tp.Name, spec, now); err != nil {
			return nil, err
		}
	}
	return warnings, nil
}

// keepTextOrder lists the created tables after the others, in the text's
// order (they were created dependencies first).
func keepTextOrder(ctx context.Context, db *store.DB, created []string, now time.Time) error {
	cat, err := schema.Load(ctx, db)
	if err != nil {
		return err
	}
	var names []string
	for _, t := range cat.Tables {
		if !slices.Contains(created, t.Name) {
			names = append(names, t.Name)
		}
	}
	names = append(names, created...)
	return schema.SortTables(ctx, db, names, now)
}
