package bradypus

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/templates"
)

// Saved queries and charts are stored by BraDypUS as the JSON object its
// client sent (controllers/SavedQueries.php, Chart.php), the same wire
// object Strata's client sends to savedquery and charts (CONTRACT §10):
// they are copied as they are, ids, owners and sharing kept. A definition
// that is not a JSON object cannot be mapped with confidence and fails
// the upgrade with its id.

// definition reads a stored JSON definition as Strata keeps it: an object
// ("" and PHP's empty array are the empty object).
func definition(what string, id, v any) (string, error) {
	s := strings.TrimSpace(fmt.Sprint(v))
	if v == nil || s == "" || s == "[]" || s == "null" {
		return "{}", nil
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(s), &obj); err != nil || obj == nil {
		return "", fmt.Errorf("%s %v: its definition is not a JSON object, so it cannot be converted", what, id)
	}
	return s, nil
}

func copyQueriesAndCharts(ctx context.Context, tx *store.DB, la *legacyApp, users map[int64]bool, now time.Time) error {
	owner := func(v any) any {
		if n, ok := asInt(v); ok && users[n] {
			return n
		}
		return nil
	}
	var failed error
	fail := func(err error) {
		if failed == nil {
			failed = err
		}
	}
	err := copyRows(ctx, tx, la, "bdus_queries", "saved_queries", []string{"id", "name", "tb", "user_id", "is_global", "query", "created_at"},
		[]string{"id", "name", "tb", "owner", "shared", "definition", "created_at", "updated_at"}, func(r []any) []any {
			r[3] = owner(r[3])
			r[4] = truthy(r[4])
			def, err := definition("saved query", r[0], r[5])
			if err != nil {
				fail(err)
			}
			r[5] = def
			r[6] = unixTime(r[6], now)
			return append(r, r[6])
		})
	if err == nil {
		err = failed
	}
	if err != nil {
		return fmt.Errorf("saved queries: %w", err)
	}
	err = copyRows(ctx, tx, la, "bdus_charts", "charts", []string{"id", "name", "user_id", "is_global", "definition", "created_at"},
		[]string{"id", "name", "userid", "is_global", "definition", "created_at"}, func(r []any) []any {
			r[2] = owner(r[2])
			global := 0
			if truthy(r[3]) {
				global = 1
			}
			r[3] = global
			def, err := definition("chart", r[0], r[4])
			if err != nil {
				fail(err)
			}
			r[4] = def
			r[5] = unixTime(r[5], now)
			return r
		})
	if err == nil {
		err = failed
	}
	if err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	return nil
}

// copyTemplates brings bdus_cfg_templates over: BraDypUS 5 keeps a print
// template as {"sections": [...]} (lib/Template/Loader.php), the shape
// Strata's templates take; each is read and checked with templates.Parse
// against the converted table, as PUT /templates does. A template that does
// not pass fails the upgrade with its table and name.
func copyTemplates(ctx context.Context, tx *store.DB, la *legacyApp, now time.Time) (int, error) {
	if !la.tables["bdus_cfg_templates"] {
		return 0, nil
	}
	rows, err := la.db.QueryContext(ctx, `SELECT COALESCE(table_name, ''), COALESCE(name, ''), COALESCE(content, '') FROM bdus_cfg_templates ORDER BY id`)
	if err != nil {
		return 0, fmt.Errorf("read bdus_cfg_templates: %w", err)
	}
	type tpl struct{ tb, name, content string }
	var all []tpl
	for rows.Next() {
		var t tpl
		if err := rows.Scan(&t.tb, &t.name, &t.content); err != nil {
			rows.Close()
			return 0, err
		}
		all = append(all, t)
	}
	rows.Close()
	if len(all) == 0 {
		return 0, nil
	}
	cat, err := schema.Load(ctx, tx)
	if err != nil {
		return 0, err
	}
	for _, t := range all {
		where := fmt.Sprintf("template %s of %s", t.name, t.tb)
		tb, ok := cat.Table(t.tb)
		if !ok {
			return 0, fmt.Errorf("%s: no such table", where)
		}
		if err := templates.CheckName(t.name); err != nil {
			return 0, fmt.Errorf("%s: %w", where, err)
		}
		var doc struct {
			Sections []any `json:"sections"`
		}
		if err := json.Unmarshal([]byte(t.content), &doc); err != nil || doc.Sections == nil {
			return 0, fmt.Errorf("%s: its content is not {\"sections\": [...]}", where)
		}
		sections, err := templates.Parse(cat, tb, doc.Sections)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", where, err)
		}
		if err := templates.Save(ctx, tx, t.tb, t.name, sections, now); err != nil {
			return 0, fmt.Errorf("%s: %w", where, err)
		}
	}
	return len(all), nil
}
