package bradypus

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/assemblage"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// copyAssemblages brings bdus_assemblage_analyses over (BraDypUS M034;
// controllers/AssemblageAnalysis.php): the wizard's definition object
// ({source_tb, char_field, group_path, group_field, measure,
// measure_field, filters}, the shape core/assemblage reads) as
// json_encode wrote it, with id, owner (user_id), sharing (is_global) and
// created_at kept. A definition that is not a JSON object fails the
// upgrade with its id, as a chart's does. One that is an object but does
// not pass core/assemblage's check against the converted tables (BraDypUS
// checks little when saving, and a field may have gone since) is kept as
// it was with a warning: it fails when run, as any analysis left behind
// by a schema change does, and its owner can mend it.
func copyAssemblages(ctx context.Context, tx *store.DB, la *legacyApp, users map[int64]bool, rep *Report, now time.Time) (int, error) {
	const table = "bdus_assemblage_analyses"
	if !la.tables[table] {
		return 0, nil
	}
	cols := []string{"id", "user_id", "name", "definition", "created_at", "is_global"}
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = "NULL"
		if la.columnExists(ctx, table, c) {
			sel[i] = quoteLegacy(c)
		}
	}
	rows, err := la.db.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM `+table+` ORDER BY id`)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", table, err)
	}
	var all []*assemblage.Analysis
	for rows.Next() {
		var id, owner, name, def, created, global any
		if err := rows.Scan(&id, &owner, &name, &def, &created, &global); err != nil {
			rows.Close()
			return 0, err
		}
		n, ok := asInt(id)
		if !ok || n <= 0 {
			rows.Close()
			return 0, fmt.Errorf("assemblage analysis %v: not an id", id)
		}
		a := &assemblage.Analysis{ID: n, IsGlobal: truthy(text(global)), CreatedAt: unixTime(text(created), now)}
		a.UpdatedAt = a.CreatedAt
		if u, ok := asInt(owner); ok && users[u] {
			a.Owner = &u
		} else {
			rep.warnf("assemblage analysis %d: its owner (user %v) is not a user; it is kept without one (admins may change it)", n, text(owner))
		}
		a.Name = strings.TrimSpace(str(name))
		if a.Name == "" {
			a.Name = fmt.Sprintf("Analysis %d", n)
			rep.warnf("assemblage analysis %d had no name; it is named %q", n, a.Name)
		}
		s, err := definition("assemblage analysis", n, text(def))
		if err != nil {
			rows.Close()
			return 0, err
		}
		if err := json.Unmarshal([]byte(s), &a.Definition); err != nil {
			rows.Close()
			return 0, fmt.Errorf("assemblage analysis %d: %w", n, err)
		}
		all = append(all, a)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return 0, err
	}
	rows.Close()
	if len(all) == 0 {
		return 0, nil
	}
	cat, err := schema.Load(ctx, tx)
	if err != nil {
		return 0, err
	}
	for _, a := range all {
		if err := assemblage.Check(cat, a.Definition); err != nil {
			rep.warnf("assemblage analysis %d (%s) is kept, but it cannot run on the converted tables: %v", a.ID, a.Name, err)
		}
		if err := assemblage.InsertKept(ctx, tx, a); err != nil {
			return 0, err
		}
	}
	return len(all), nil
}

// text is a value read from the legacy file as text (the driver gives
// bytes for some columns); nil stays nil.
func text(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}

// str is a value read from the legacy file as a string ("" for none).
func str(v any) string {
	if v = text(v); v == nil {
		return ""
	}
	return fmt.Sprint(v)
}
