// Package templates keeps print templates per table and name (SPEC §4.6,
// CONTRACT §10): the sections of a record's printed page — core fields,
// a plugin table's rows, accordion panels — each field with a width, and
// renders a record through one as standalone HTML.
package templates

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Widths a field may take (CONTRACT §10).
var Widths = []string{"1/1", "1/2", "1/3", "2/3", "1/4", "3/4"}

var (
	ErrNotFound     = errs.New(errs.NotFound, "template_not_found", "no such template")
	ErrExists       = errs.New(errs.Conflict, "template_exists", "the table already has a template of this name")
	ErrInvalidName  = errs.New(errs.Invalid, "invalid_template_name", "a template name is 1 to 64 letters, digits, _ or -")
	ErrUnknownField = errs.New(errs.Invalid, "unknown_field", "the template names a field the table does not have")
	ErrInvalidWidth = errs.New(errs.Invalid, "invalid_width", "a width is one of 1/1, 1/2, 1/3, 2/3, 1/4, 3/4")
	ErrInvalid      = errs.New(errs.Invalid, "invalid_template", "the template is not valid")
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Item is one field of a section.
type Item struct {
	Field string `json:"field"`
	Width string `json:"width,omitempty"`
}

// Panel is one panel of an accordion section.
type Panel struct {
	Label  string `json:"label"`
	Open   *bool  `json:"open,omitempty"`
	Fields []Item `json:"fields"`
}

// Section is one part of a template.
type Section struct {
	Type   string  `json:"type"` // core (default), plugin, accordion
	Label  string  `json:"label,omitempty"`
	Plugin string  `json:"plugin,omitempty"` // plugin sections: the plugin table
	Items  []Item  `json:"content,omitempty"`
	Panels []Panel `json:"panels,omitempty"`
}

// Parse reads and checks a template's sections against table t of cat:
// every field must be a field of its table (unknown_field), every width
// one of Widths (invalid_width). Items may be given as {field, width} or
// as a field's name; an accordion's content is its panels.
func Parse(cat *schema.Catalog, t *schema.Table, raw []any) ([]Section, error) {
	out := make([]Section, 0, len(raw))
	for i, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, ErrInvalid.With("detail", fmt.Sprintf("section %d is not an object", i+1))
		}
		s := Section{Type: str(m["type"]), Label: str(m["label"])}
		if s.Type == "" {
			s.Type = "core"
		}
		table := t
		switch s.Type {
		case "core":
		case "plugin":
			s.Plugin = str(m["plugin"])
			if s.Plugin == "" {
				s.Plugin = str(m["table"])
			}
			pt, ok := cat.Table(s.Plugin)
			if !ok || !pt.IsPlugin || pt.PluginOf != t.Name {
				return nil, ErrUnknownField.With("detail", fmt.Sprintf("section %d: %q is not a plugin table of %s", i+1, s.Plugin, t.Name))
			}
			table = pt
		case "accordion":
			list, _ := m["content"].([]any)
			if list == nil {
				list, _ = m["panels"].([]any)
			}
			for j, p := range list {
				pm, ok := p.(map[string]any)
				if !ok {
					return nil, ErrInvalid.With("detail", fmt.Sprintf("section %d panel %d is not an object", i+1, j+1))
				}
				panel := Panel{Label: str(pm["label"])}
				if b, ok := pm["open"].(bool); ok {
					panel.Open = &b
				}
				items, err := parseItems(table, pm["fields"], i)
				if err != nil {
					return nil, err
				}
				panel.Fields = items
				s.Panels = append(s.Panels, panel)
			}
			out = append(out, s)
			continue
		default:
			return nil, ErrInvalid.With("detail", fmt.Sprintf("section %d: type is core, plugin or accordion", i+1))
		}
		items, err := parseItems(table, m["content"], i)
		if err != nil {
			return nil, err
		}
		s.Items = items
		out = append(out, s)
	}
	return out, nil
}

func parseItems(t *schema.Table, raw any, section int) ([]Item, error) {
	list, _ := raw.([]any)
	out := make([]Item, 0, len(list))
	for _, r := range list {
		var it Item
		switch x := r.(type) {
		case string:
			it.Field = x
		case map[string]any:
			it.Field, it.Width = str(x["field"]), str(x["width"])
			// A width is one of Widths, a string: any other JSON value
			// (-1, 0.5, true) is refused, not read as "no width".
			if w, ok := x["width"]; ok && w != nil {
				if _, isString := w.(string); !isString {
					return nil, ErrInvalidWidth.With("field", it.Field).With("width", w)
				}
			}
		default:
			return nil, ErrInvalid.With("detail", fmt.Sprintf("section %d: an item is a field name or {field, width}", section+1))
		}
		if _, ok := t.Field(it.Field); !ok && it.Field != schema.ColID {
			return nil, ErrUnknownField.With("field", it.Field).With("table", t.Name)
		}
		if it.Width != "" && !slices.Contains(Widths, it.Width) {
			return nil, ErrInvalidWidth.With("field", it.Field).With("width", it.Width)
		}
		out = append(out, it)
	}
	return out, nil
}

func str(v any) string {
	s, _ := v.(string)
	return strings.TrimSpace(s)
}

// CheckName checks a template name.
func CheckName(name string) error {
	if !namePattern.MatchString(name) {
		return ErrInvalidName
	}
	return nil
}

// Tables are the tables with at least one template.
func Tables(ctx context.Context, db *store.DB) ([]string, error) {
	return strings1(ctx, db, `SELECT DISTINCT tb FROM `+db.Sys("templates")+` ORDER BY tb`)
}

// Names are table's template names.
func Names(ctx context.Context, db *store.DB, table string) ([]string, error) {
	return strings1(ctx, db, `SELECT name FROM `+db.Sys("templates")+` WHERE tb = ? ORDER BY name`, table)
}

func strings1(ctx context.Context, db *store.DB, q string, args ...any) ([]string, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Get returns the sections of table's template name.
func Get(ctx context.Context, db *store.DB, table, name string) ([]Section, error) {
	var content string
	err := db.QueryRow(ctx, `SELECT content FROM `+db.Sys("templates")+` WHERE tb = ? AND name = ?`, table, name).Scan(&content)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound.With("tb", table).With("name", name)
	}
	if err != nil {
		return nil, err
	}
	var out []Section
	if err := json.Unmarshal([]byte(content), &out); err != nil {
		return nil, fmt.Errorf("template %s/%s: %w", table, name, err)
	}
	return out, nil
}

// Save creates or replaces table's template name.
func Save(ctx context.Context, db *store.DB, table, name string, sections []Section, now time.Time) error {
	b, err := json.Marshal(sections)
	if err != nil {
		return err
	}
	return db.Tx(ctx, func(tx *store.DB) error {
		r, err := tx.Exec(ctx, `UPDATE `+tx.Sys("templates")+` SET content = ?, updated_at = ? WHERE tb = ? AND name = ?`, string(b), now.UTC(), table, name)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n > 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO `+tx.Sys("templates")+` (tb, name, content, updated_at) VALUES (?, ?, ?, ?)`, table, name, string(b), now.UTC())
		return err
	})
}

// Rename renames table's template name to to.
func Rename(ctx context.Context, db *store.DB, table, name, to string) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+tx.Sys("templates")+` WHERE tb = ? AND name = ?`, table, to).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrExists.With("name", to)
		}
		r, err := tx.Exec(ctx, `UPDATE `+tx.Sys("templates")+` SET name = ? WHERE tb = ? AND name = ?`, to, table, name)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNotFound.With("tb", table).With("name", name)
		}
		return nil
	})
}

// Delete removes table's template name.
func Delete(ctx context.Context, db *store.DB, table, name string) error {
	r, err := db.Exec(ctx, `DELETE FROM `+db.Sys("templates")+` WHERE tb = ? AND name = ?`, table, name)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return ErrNotFound.With("tb", table).With("name", name)
	}
	return nil
}
