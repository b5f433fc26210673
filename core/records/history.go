package records

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// HistoryLimit is how many recent records GET /history returns.
const HistoryLimit = 50

// touch records that the caller created or changed a record; it runs in
// the save's transaction. API keys have no history.
func (s *Scope) touch(ctx context.Context, id int64, action string) error {
	if s.Actor.UserID == 0 {
		return nil
	}
	// Its answer is not needed: in a PostgreSQL transaction it goes with
	// the next statement (the commit, for a save).
	return s.DB.ExecLater(ctx, "record history", `INSERT INTO `+s.DB.Sys("history")+` (user_id, tb, record_id, action, at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (user_id, tb, record_id) DO UPDATE SET action = excluded.action, at = excluded.at`,
		s.Actor.UserID, s.Table.Name, id, action, s.now().Truncate(time.Microsecond))
}

// HistoryEntry is one recent record of a user.
type HistoryEntry struct {
	Table      string    `json:"tb"`
	TableLabel string    `json:"tb_label"`
	ID         int64     `json:"id"`
	Label      string    `json:"label"`
	Action     string    `json:"action"`
	At         time.Time `json:"at"`
}

// History returns the user's most recently created or changed records that
// still exist and that the user may still read (access gives the user's
// level and row subset per table), newest first; labels cost one query per
// table.
func History(ctx context.Context, db *store.DB, cat *schema.Catalog, userID int64, access func(context.Context, *schema.Table) (TableAccess, error)) ([]HistoryEntry, error) {
	out := []HistoryEntry{}
	if userID == 0 {
		return out, nil
	}
	rows, err := db.Query(ctx, `SELECT tb, record_id, action, at FROM `+db.Sys("history")+` WHERE user_id = ? ORDER BY at DESC, record_id DESC LIMIT ?`, userID, HistoryLimit)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	var entries []HistoryEntry
	byTable := map[string][]int64{}
	for rows.Next() {
		var e HistoryEntry
		if err := rows.Scan(&e.Table, &e.ID, &e.Action, &e.At); err != nil {
			rows.Close()
			return nil, err
		}
		entries = append(entries, e)
		byTable[e.Table] = append(byTable[e.Table], e.ID)
	}
	rows.Close()
	tables := make([]string, 0, len(byTable))
	for tb := range byTable {
		tables = append(tables, tb)
	}
	sort.Strings(tables)
	labels := map[string]map[int64]string{}
	for _, tb := range tables {
		t, ok := cat.Table(tb)
		if !ok {
			continue
		}
		acc, err := access(ctx, t)
		if err != nil {
			return nil, err
		}
		if !acc.Readable() {
			continue
		}
		sc := &Scope{DB: db, Catalog: cat, Table: t, Level: acc.Level, Restrict: acc.Restrict, Access: access}
		l, err := sc.labels(ctx, t, byTable[tb])
		if err != nil {
			return nil, err
		}
		labels[tb] = l
	}
	for _, e := range entries {
		l, ok := labels[e.Table][e.ID]
		if !ok {
			continue // deleted since, or no longer readable
		}
		t, _ := cat.Table(e.Table)
		e.TableLabel, e.Label = t.Label, l
		out = append(out, e)
	}
	return out, nil
}

// Edit history (GET /history's data): the stored versions, one row per
// update, delete or restore, in BraDypUS's row shape.

// Paging of the edit history.
const (
	EditHistoryPerPage    = 50
	EditHistoryMaxPerPage = 200
)

// EditQuery selects rows of the edit history. Zero values select all.
type EditQuery struct {
	Page, PerPage int
	Table         string    // exact table name
	User          string    // a user id, or part of a user's name or email (case folded)
	RecordID      int64     // one record
	From, To      time.Time // time >= From, time < To
}

// EditEntry is one version of a record: content is the record as it was
// before the operation, {core, plugins}, as JSON text (BraDypUS's
// client shows it as text). editsql and editvalues are BraDypUS's legacy
// columns, empty there too.
type EditEntry struct {
	ID         int64     `json:"id"`
	Time       time.Time `json:"time"`
	UserID     *int64    `json:"userid"`
	User       string    `json:"user"`
	Table      string    `json:"tb"`
	TableLabel string    `json:"tb_label"`
	RowID      int64     `json:"rowid"`
	Operation  string    `json:"operation"`
	Content    string    `json:"content"`
	EditSQL    string    `json:"editsql"`
	EditValues string    `json:"editvalues"`
	// Actor names who made a change no user made: "plugin:<name>" for a
	// plugin's system save (user then says so too; userid is null).
	Actor string `json:"actor,omitempty"`
}

// TableReader decides for the edit history whether the caller may read a
// table's versions and, if so, within which row subset (nil: all rows).
type TableReader func(t *schema.Table) (ok bool, restrict *Cond, err error)

// EditHistory lists versions newest first, a page at a time, with the
// total that match. Only tables of the catalog that reader allows are
// seen; on a table with a row subset, only versions of records that still
// exist and lie in the subset (a deleted record can no longer be placed).
func EditHistory(ctx context.Context, db *store.DB, cat *schema.Catalog, q EditQuery, reader TableReader) ([]EditEntry, int64, error) {
	out := []EditEntry{}
	var open []any
	var parts []string
	var args []any
	for _, t := range cat.Tables {
		if t.IsPlugin {
			continue
		}
		ok, restrict, err := reader(t)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case !ok:
		case restrict == nil || restrict.SQL == "":
			open = append(open, t.Name)
		default:
			parts = append(parts, `(v.tb = ? AND v.record_id IN (SELECT `+db.Engine.Quote("id")+` FROM `+db.Qualify(t.Name)+` WHERE `+restrict.SQL+`))`)
			args = append(append(args, t.Name), restrict.Args...)
		}
	}
	if len(open) > 0 {
		parts = append(parts, `v.tb IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(open)), ", ")+`)`)
		args = append(args, open...)
	}
	if len(parts) == 0 {
		return out, 0, nil
	}
	where := `(` + strings.Join(parts, " OR ") + `)`
	if q.Table != "" {
		where += ` AND v.tb = ?`
		args = append(args, q.Table)
	}
	if q.RecordID != 0 {
		where += ` AND v.record_id = ?`
		args = append(args, q.RecordID)
	}
	if !q.From.IsZero() {
		where += ` AND v.time >= ?`
		args = append(args, q.From.UTC())
	}
	if !q.To.IsZero() {
		where += ` AND v.time < ?`
		args = append(args, q.To.UTC())
	}
	if u := strings.TrimSpace(q.User); u != "" {
		pattern := "%" + likeEscaper.Replace(store.Fold(u)) + "%"
		cond := db.FoldSQL("u.name") + ` LIKE ? ESCAPE '\' OR ` + db.FoldSQL("u.email") + ` LIKE ? ESCAPE '\'`
		uargs := []any{pattern, pattern}
		if id, err := strconv.ParseInt(u, 10, 64); err == nil {
			cond = `v.userid = ? OR ` + cond
			uargs = append([]any{id}, uargs...)
		}
		where += ` AND (` + cond + `)`
		args = append(args, uargs...)
	}
	from := ` FROM ` + db.Sys("versions") + ` v LEFT JOIN ` + db.Sys("users") + ` u ON u.id = v.userid WHERE ` + where
	var total int64
	if err := db.QueryRow(ctx, `SELECT COUNT(*)`+from, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count history: %w", err)
	}
	page, per := q.Page, q.PerPage
	if page < 1 {
		page = 1
	}
	if per < 1 {
		per = EditHistoryPerPage
	}
	if per > EditHistoryMaxPerPage {
		per = EditHistoryMaxPerPage
	}
	if total == 0 || int64(page-1)*int64(per) >= total {
		return out, total, nil
	}
	rows, err := db.Query(ctx, `SELECT v.id, v.tb, v.record_id, v.userid, v.time, v.operation, v.content, u.name, u.email, v.actor`+from+
		` ORDER BY v.id DESC LIMIT ? OFFSET ?`, append(args, per, (page-1)*per)...)
	if err != nil {
		return nil, 0, fmt.Errorf("read history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e EditEntry
		var name, email, actor *string
		if err := rows.Scan(&e.ID, &e.Table, &e.RowID, &e.UserID, &e.Time, &e.Operation, &e.Content, &name, &email, &actor); err != nil {
			return nil, 0, err
		}
		switch {
		case actor != nil && *actor != "":
			e.Actor, e.User = *actor, *actor
		case name != nil && *name != "":
			e.User = *name
		case email != nil:
			e.User = *email
		case e.UserID != nil:
			e.User = strconv.FormatInt(*e.UserID, 10)
		}
		if t, ok := cat.Table(e.Table); ok {
			e.TableLabel = t.Label
		}
		out = append(out, e)
	}
	return out, total, rows.Err()
}
