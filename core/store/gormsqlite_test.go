package store

import (
	"strings"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

type sb struct{ strings.Builder }

func (b *sb) WriteQuoted(field any)            { b.WriteString(`"` + field.(string) + `"`) }
func (b *sb) AddVar(_ clause.Writer, _ ...any) {}
func (b *sb) AddError(error) error             { return nil }

func TestSQLiteDialectorClauses(t *testing.T) {
	n := func(v int) *int { return &v }
	limits := []struct {
		in   clause.Limit
		want string
	}{
		{clause.Limit{Limit: n(10)}, "LIMIT 10"},
		{clause.Limit{Limit: n(10), Offset: 20}, "LIMIT 10 OFFSET 20"},
		{clause.Limit{Offset: 20}, "LIMIT -1 OFFSET 20"}, // SQLite needs a LIMIT before OFFSET
		{clause.Limit{}, ""},
	}
	for _, tc := range limits {
		var b sb
		sqliteLimit(clause.Clause{Expression: tc.in}, &b)
		if got := b.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.in, got, tc.want)
		}
	}
	quotes := map[string]string{`users`: `"users"`, `main.users`: `"main"."users"`, `we"ird`: `"we""ird"`}
	for in, want := range quotes {
		var b strings.Builder
		sqliteDialector{}.QuoteTo(&b, in)
		if b.String() != want {
			t.Errorf("QuoteTo(%q) = %q, want %q", in, b.String(), want)
		}
	}
}

// TestSQLiteConstraintErrorsTranslate: gorm callers test
// gorm.ErrDuplicatedKey on both engines.
func TestSQLiteConstraintErrorsTranslate(t *testing.T) {
	db, err := openSQLiteFile(t.TempDir() + "/t.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	for _, q := range []string{
		`CREATE TABLE p (id INTEGER PRIMARY KEY, u TEXT UNIQUE, n INTEGER CHECK (n > 0))`,
		`CREATE TABLE c (p INTEGER REFERENCES p (id))`,
		`INSERT INTO p (id, u, n) VALUES (1, 'a', 1)`,
	} {
		if _, err := db.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		sql  string
		want error
	}{
		{`INSERT INTO p (id, u, n) VALUES (2, 'a', 1)`, gorm.ErrDuplicatedKey},
		{`INSERT INTO p (id, u, n) VALUES (1, 'b', 1)`, gorm.ErrDuplicatedKey},
		{`INSERT INTO c (p) VALUES (7)`, gorm.ErrForeignKeyViolated},
		{`INSERT INTO p (id, u, n) VALUES (3, 'c', 0)`, gorm.ErrCheckConstraintViolated},
	}
	for _, tc := range cases {
		err := db.Gorm.WithContext(ctx).Exec(tc.sql).Error
		if err != tc.want {
			t.Errorf("%s: %v, want %v", tc.sql, err, tc.want)
		}
	}
}
