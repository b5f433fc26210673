package records

import (
	"context"
	"database/sql"
	"errors"

	"github.com/strata-archaeo/strata/core/schema"
)

// SavePluginRow saves one row of plugin table pt on its own, as BraDypUS's
// clients do (POST /record/<plugin_tb> {core:{id_link, ...}}): it is a save
// of the parent record that adds or changes that one row, with the
// parent's rules, privileges (edit on the parent), version and hooks.
// parent is the caller's scope on pt's parent table. The result's ID is
// the plugin row's.
func SavePluginRow(ctx context.Context, parent *Scope, pt *schema.Table, in SaveInput) (SaveResult, error) {
	fields := map[string]any{}
	var link any
	for k, v := range in.Core {
		switch k {
		case schema.ColIDLink:
			link = v
		case schema.ColID:
		default:
			fields[k] = v
		}
	}
	parentID, err := IDOf(link)
	if err != nil {
		return SaveResult{}, ErrInvalidParameter.With("parameter", schema.ColIDLink).With("detail", "id_link is the parent record's id")
	}
	if in.ID != 0 {
		var cur int64
		err := parent.DB.QueryRow(ctx, `SELECT "id_link" FROM `+parent.DB.Qualify(pt.Name)+` WHERE "id" = ?`, in.ID).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return SaveResult{}, ErrRecordNotFound.With("table", pt.Name).With("id", in.ID)
		}
		if err != nil {
			return SaveResult{}, err
		}
		if parentID != 0 && parentID != cur {
			return SaveResult{}, ErrInvalidParameter.With("parameter", schema.ColIDLink).With("detail", "a plugin row stays with its parent record")
		}
		parentID = cur
	} else if parentID == 0 {
		return SaveResult{}, ErrInvalidParameter.With("parameter", schema.ColIDLink).With("detail", "id_link (the parent record's id) is required")
	}
	res, err := SaveVersioned(ctx, parent, SaveInput{ID: parentID, Core: map[string]any{},
		Plugins: map[string][]PluginRowInput{pt.Name: {{ID: in.ID, IsNew: in.ID == 0, Fields: fields}}}})
	if err != nil {
		return SaveResult{}, err
	}
	out := SaveResult{ID: in.ID, Created: in.ID == 0, Version: res.Version}
	if out.Created && len(res.ChildIDs) > 0 {
		out.ID = res.ChildIDs[0]
	}
	return out, nil
}
