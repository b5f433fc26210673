package records

import (
	"strings"

	"github.com/strata-archaeo/strata/core/wire"
)

// saveBody is a record body as POST /record/{tb} takes it (CONTRACT §5).
type saveBody struct {
	ID      any                    `json:"id"`
	Core    map[string]any         `json:"core"`
	Plugins map[string][]pluginRow `json:"plugins"`
}

type pluginRow struct {
	ID     any            `json:"id"`
	IsNew  bool           `json:"_isNew"`
	Delete bool           `json:"_delete"`
	Fields map[string]any `json:"fields"`
}

// SaveInputOf reads a decoded record body, the one form for every route
// that saves records (a single save, a batch): {id?, core, plugins}, or the
// fields at the top level as scripts written for BraDypUS send them
// ({"sigla":"W999"}). pathID (0: none) is the url's id, which a body id
// must match. A value of the wrong shape is a *wire.FieldError; an id that
// is not one is ErrInvalidID.
func SaveInputOf(raw map[string]any, pathID int64) (SaveInput, error) {
	var b saveBody
	if err := wire.Assign(raw, &b, wire.Options{ExactNumbers: true}); err != nil {
		return SaveInput{}, err
	}
	in := SaveInput{Core: b.Core, Plugins: map[string][]PluginRowInput{}}
	if _, wrapped := raw["core"]; !wrapped {
		for k, v := range raw {
			if k != "id" && k != "plugins" {
				if in.Core == nil {
					in.Core = map[string]any{}
				}
				in.Core[k] = v
			}
		}
	}
	if in.Core == nil {
		in.Core = map[string]any{}
	}
	id, err := IDOf(b.ID)
	if err != nil {
		return SaveInput{}, err
	}
	if pathID != 0 {
		if id != 0 && id != pathID {
			return SaveInput{}, ErrInvalidID.With("detail", "the path id and the body id differ")
		}
		id = pathID
	}
	in.ID = id
	rawPlugins, _ := raw["plugins"].(map[string]any)
	for tb, rows := range b.Plugins {
		rawRows, _ := rawPlugins[tb].([]any)
		for i, r := range rows {
			rid, err := IDOf(r.ID)
			if err != nil {
				return SaveInput{}, err
			}
			if r.Fields == nil && i < len(rawRows) {
				r.Fields = flatFields(rawRows[i])
			}
			in.Plugins[tb] = append(in.Plugins[tb], PluginRowInput{ID: rid, IsNew: r.IsNew, Delete: r.Delete, Fields: r.Fields})
		}
	}
	return in, nil
}

// flatFields are the fields of a plugin row sent without "fields", at its
// top level beside id, _isNew and _delete (as the core fields may be):
// taken as its fields rather than dropped, which would save an empty row.
func flatFields(row any) map[string]any {
	m, _ := row.(map[string]any)
	var out map[string]any
	for k, v := range m {
		switch k {
		case "id", "_isNew", "_delete", "fields":
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = v
	}
	return out
}

// IDOf reads an optional id sent as a number or a numeric string.
func IDOf(v any) (int64, error) {
	if v == nil {
		return 0, nil
	}
	if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
		return 0, nil
	}
	id, err := wire.Int(v)
	if err != nil || id < 0 {
		return 0, ErrInvalidID
	}
	return id, nil
}
