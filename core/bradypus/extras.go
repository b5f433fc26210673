package bradypus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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

// templateFiles accounts for the print templates BraDypUS kept on disk
// before 5.1, as template/<tb>.<name>.json in the application folder
// (lib/Template/Loader.php; the name is what lies between the first and
// the second dot, as M011 reads it). M011_ConfigToDb imported every such
// file into bdus_cfg_templates and left the files where they were, no
// longer read: from then on BraDypUS lists and edits only the database's
// templates (a file is read only for a name the database lacks, and never
// listed). So the database is the application's set of templates, and the
// files are not converted:
//   - a file whose table and name are in bdus_cfg_templates is the copy
//     M011 imported, perhaps edited since in the database; only the log
//     mentions it;
//   - a file whose name is not there was deleted or renamed in BraDypUS
//     after the import (or put there by hand): bringing it back would undo
//     that, so it is left out with a warning naming it. It stays in the
//     snapshot, and an admin can save it again with POST /template/{tb}/{name}.
func templateFiles(ctx context.Context, root *folderRoot, la *legacyApp, rep *Report) error {
	entries, err := root.readDir("template")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if e, ok := asRefused(err); ok {
		rep.refused(e)
		rep.warnf("the template folder is not read: %s", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("template folder: %w", err)
	}
	inDB := map[[2]string]bool{}
	if la.tables["bdus_cfg_templates"] {
		rows, err := la.db.QueryContext(ctx, `SELECT COALESCE(table_name, ''), COALESCE(name, '') FROM bdus_cfg_templates`)
		if err != nil {
			return fmt.Errorf("read bdus_cfg_templates: %w", err)
		}
		for rows.Next() {
			var k [2]string
			if err := rows.Scan(&k[0], &k[1]); err != nil {
				rows.Close()
				return err
			}
			inDB[k] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") {
			continue
		}
		parts := strings.SplitN(name, ".", 3)
		if len(parts) != 3 {
			rep.logf("template/%s: not named <table>.<name>.json; BraDypUS never read it", name)
			continue
		}
		if inDB[[2]string{parts[0], parts[1]}] {
			rep.logf("template/%s: superseded by bdus_cfg_templates (imported by BraDypUS's M011)", name)
			continue
		}
		rep.warnf("template file template/%s (%s of %s) is not converted: BraDypUS 5 no longer listed it (not in bdus_cfg_templates: deleted or renamed there after BraDypUS imported its files); it is kept in the snapshot", name, parts[1], parts[0])
	}
	return nil
}
