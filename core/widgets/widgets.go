// Package widgets keeps an application's widgets: ES modules a super admin
// uploads and a field's `widget` parameter names, which the client imports
// to edit that field (SPEC.md §4.6, CONTRACT.md §10 "Widgets").
//
// They live in the app's database (sys_widgets), not on disk, so a backup
// carries them and every node of a cluster serves the same module. Serving
// a stored module needs no domain logic, so this is a core area rather than
// a plugin process.
package widgets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// MaxSize caps a widget's module (CONTRACT.md §10).
const MaxSize = 256 << 10

// maxName bounds a name so it stays a sensible file and URL segment.
const maxName = 64

var namePattern = regexp.MustCompile(`^[a-z0-9-]+$`)

// Errors of the area.
var (
	ErrInvalidName = errs.New(errs.Invalid, "invalid_widget_name", "a widget name is 1 to 64 lower-case letters, digits or -")
	ErrNotFound    = errs.New(errs.NotFound, "widget_not_found", "no such widget")
	ErrTooLarge    = errs.New(errs.TooLarge, "widget_too_large", "a widget is at most 256 KiB")
	ErrEmpty       = errs.New(errs.Invalid, "invalid_widget", "the widget is empty: send the module as the body or as the multipart part file")
	ErrNotText     = errs.New(errs.Invalid, "invalid_widget", "a widget is a JavaScript module in UTF-8 text, without NUL bytes")
)

// CheckName checks a widget name: [a-z0-9-], 1 to 64 characters.
func CheckName(name string) error {
	if len(name) > maxName || !namePattern.MatchString(name) {
		return ErrInvalidName.With("name", name)
	}
	return nil
}

// CheckModule checks a module's size and that it is text.
func CheckModule(src []byte) error {
	switch {
	case len(src) > MaxSize:
		return ErrTooLarge.With("limit", MaxSize)
	case len(bytes.TrimSpace(src)) == 0:
		return ErrEmpty
	case !utf8.Valid(src) || bytes.IndexByte(src, 0) >= 0:
		return ErrNotText
	}
	return nil
}

// ETag is the strong entity tag of a module: a digest of its bytes, so
// the same module always has the same tag, on every node.
func ETag(src []byte) string {
	sum := sha256.Sum256(src)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// Widget is one stored module.
type Widget struct {
	Name    string
	Content []byte
	ETag    string
}

// Names lists the app's widgets, sorted.
func Names(ctx context.Context, db *store.DB) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT name FROM `+db.Sys("widgets")+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("widgets: %w", err)
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

// Exists reports whether the app has a widget of that name.
func Exists(ctx context.Context, db *store.DB, name string) (bool, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("widgets")+` WHERE name = ?`, name).Scan(&n)
	return n > 0, err
}

// Get returns a widget.
func Get(ctx context.Context, db *store.DB, name string) (*Widget, error) {
	var w Widget
	var content string
	err := db.QueryRow(ctx, `SELECT name, content, etag FROM `+db.Sys("widgets")+` WHERE name = ?`, name).
		Scan(&w.Name, &content, &w.ETag)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound.With("name", name)
	}
	if err != nil {
		return nil, fmt.Errorf("widget %s: %w", name, err)
	}
	w.Content = []byte(content)
	return &w, nil
}

// Save creates or replaces a widget, after checking name and module;
// created says which.
func Save(ctx context.Context, db *store.DB, name string, src []byte, now time.Time) (w *Widget, created bool, err error) {
	if err := CheckName(name); err != nil {
		return nil, false, err
	}
	if err := CheckModule(src); err != nil {
		return nil, false, err
	}
	w = &Widget{Name: name, Content: src, ETag: ETag(src)}
	at := now.UTC()
	err = db.Tx(ctx, func(tx *store.DB) error {
		r, err := tx.Exec(ctx, `UPDATE `+tx.Sys("widgets")+` SET content = ?, etag = ?, updated_at = ? WHERE name = ?`,
			string(src), w.ETag, at, name)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n > 0 {
			return nil
		}
		created = true
		_, err = tx.Exec(ctx, `INSERT INTO `+tx.Sys("widgets")+` (name, content, etag, updated_at) VALUES (?, ?, ?, ?)`,
			name, string(src), w.ETag, at)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("save widget %s: %w", name, err)
	}
	return w, created, nil
}

// Delete removes a widget. Fields naming it keep the name (the client
// falls back to its default input), as a deleted vocabulary leaves its
// fields alone.
func Delete(ctx context.Context, db *store.DB, name string) error {
	r, err := db.Exec(ctx, `DELETE FROM `+db.Sys("widgets")+` WHERE name = ?`, name)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return ErrNotFound.With("name", name)
	}
	return nil
}
