// Package applog is the application log (SPEC §4.5, CONTRACT §10): an
// append-only table per app of who did what — sign-ins and their
// failures, and every change made through the API other than ordinary
// record saves (users, privileges, keys, configuration, plugins, record
// deletions and restores, files, vocabularies, the log's own purges).
// Entries name the route and its path parameters, never a body: no
// password, token or secret can reach the log.
package applog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// Levels, on the scale BraDypUS's clients read (Monolog's).
const (
	Info    = 200
	Warning = 300
	Error   = 400
)

// LevelName is a level's name as clients show it.
func LevelName(level int) string {
	switch {
	case level >= Error:
		return "ERROR"
	case level >= Warning:
		return "WARNING"
	}
	return "INFO"
}

// Entry is one line of the log.
type Entry struct {
	ID        int64          `json:"id"`
	Time      time.Time      `json:"time"`
	Level     int            `json:"level"`
	LevelName string         `json:"level_name"`
	Channel   string         `json:"channel"`
	Action    string         `json:"action"`
	Message   string         `json:"message"`
	UserID    *int64         `json:"userid"`
	User      *string        `json:"user"`
	Table     *string        `json:"tb"`
	RecordID  *string        `json:"record_id"`
	Status    *int           `json:"status"`
	Detail    map[string]any `json:"detail"`
}

// Write appends e (its ID and LevelName are set here).
func Write(ctx context.Context, db *store.DB, e *Entry) error {
	var detail any
	if len(e.Detail) > 0 {
		b, err := json.Marshal(e.Detail)
		if err != nil {
			return err
		}
		detail = string(b)
	}
	e.LevelName = LevelName(e.Level)
	return db.QueryRow(ctx, `INSERT INTO `+db.Sys("app_log")+` (time, level, channel, action, message, userid, user_name, tb, record_id, status, detail)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		e.Time.UTC(), e.Level, e.Channel, e.Action, e.Message, e.UserID, e.User, e.Table, e.RecordID, e.Status, detail).Scan(&e.ID)
}

// Query selects entries; zero values select everything.
type Query struct {
	Page, PerPage int
	MinLevel      int       // entries at this level and above
	User          string    // a user id, or part of a name or email
	Action        string    // part of the action
	Search        string    // part of the message or action
	From, To      time.Time // inclusive bounds
}

// MaxPerPage bounds a page.
const MaxPerPage = 500

// List returns the entries matching q, newest first, and their total.
func List(ctx context.Context, db *store.DB, q Query) ([]Entry, int64, error) {
	var where []string
	var args []any
	if q.MinLevel > 0 {
		where, args = append(where, `level >= ?`), append(args, q.MinLevel)
	}
	if q.User != "" {
		where, args = append(where, `(CAST(userid AS TEXT) = ? OR LOWER(user_name) LIKE ? ESCAPE '\')`), append(args, q.User, like(q.User))
	}
	if q.Action != "" {
		where, args = append(where, `LOWER(action) LIKE ? ESCAPE '\'`), append(args, like(q.Action))
	}
	if q.Search != "" {
		where, args = append(where, `(LOWER(message) LIKE ? ESCAPE '\' OR LOWER(action) LIKE ? ESCAPE '\')`), append(args, like(q.Search), like(q.Search))
	}
	if !q.From.IsZero() {
		where, args = append(where, `time >= ?`), append(args, q.From.UTC())
	}
	if !q.To.IsZero() {
		where, args = append(where, `time <= ?`), append(args, q.To.UTC())
	}
	cond := "1 = 1"
	if len(where) > 0 {
		cond = strings.Join(where, " AND ")
	}
	var total int64
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("app_log")+` WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count log: %w", err)
	}
	per := min(max(q.PerPage, 1), MaxPerPage)
	page := max(q.Page, 1)
	rows, err := db.Query(ctx, `SELECT id, time, level, channel, action, message, userid, user_name, tb, record_id, status, detail FROM `+db.Sys("app_log")+
		` WHERE `+cond+` ORDER BY id DESC LIMIT ? OFFSET ?`, append(args, per, (page-1)*per)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list log: %w", err)
	}
	defer rows.Close()
	out := []Entry{}
	for rows.Next() {
		var e Entry
		var detail sql.NullString
		if err := rows.Scan(&e.ID, &e.Time, &e.Level, &e.Channel, &e.Action, &e.Message, &e.UserID, &e.User, &e.Table, &e.RecordID, &e.Status, &detail); err != nil {
			return nil, 0, err
		}
		e.LevelName = LevelName(e.Level)
		if detail.Valid {
			_ = json.Unmarshal([]byte(detail.String), &e.Detail)
		}
		out = append(out, e)
	}
	return out, total, rows.Err()
}

// Purge deletes the entries older than days days before now, and returns
// how many.
func Purge(ctx context.Context, db *store.DB, days int, now time.Time) (int64, error) {
	if days < 0 {
		return 0, errs.New(errs.Invalid, "invalid_parameter", "days must be 0 or more").With("parameter", "days")
	}
	res, err := db.Exec(ctx, `DELETE FROM `+db.Sys("app_log")+` WHERE time < ?`, now.UTC().AddDate(0, 0, -days))
	if err != nil {
		return 0, fmt.Errorf("purge log: %w", err)
	}
	return res.RowsAffected()
}

// like is a case-folded LIKE pattern for "contains s".
func like(s string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(s)) + "%"
}
