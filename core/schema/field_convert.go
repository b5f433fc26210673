package schema

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// A db_type change converts every stored value. The rules are decided
// here, in Go, over the text form of each value, so that both engines
// accept and refuse exactly the same data; the SQL expressions below then
// do the bulk conversion, and only ever see values these rules accepted.
//
//   - empty or blank text becomes NULL in any non-text type;
//   - text → int: an optional sign and 1–18 digits; → float: a plain
//     decimal or exponent number (no NaN, Inf or hex); → date: yyyy-mm-dd,
//     a real day; → bool: 1/true/t/yes/y or 0/false/f/no/n, any case;
//   - float → int only when integral (and within ±2^53); int or float →
//     bool only for 0 and 1; a date converts to text only;
//   - anything converts to text (bool as true/false, float in its shortest
//     form, date as yyyy-mm-dd).
var (
	intText   = regexp.MustCompile(`^[+-]?[0-9]{1,18}$`)
	floatText = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?$`)
	dateText  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

var (
	trueWords  = []string{"1", "true", "t", "yes", "y"}
	falseWords = []string{"0", "false", "f", "no", "n"}
)

// maxExactFloat bounds float → int: beyond it a float is not an exact integer.
const maxExactFloat = 1 << 53

// maxConversionExamples bounds the ids listed when a conversion fails.
const maxConversionExamples = 10

// number parses the text form of a stored int, float or bool.
func number(from DBType, s string) (float64, bool) {
	s = strings.TrimSpace(s)
	switch from {
	case DBBool:
		switch strings.ToLower(s) {
		case "true":
			return 1, true
		case "false":
			return 0, true
		}
	case DBFloat:
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return float64(v), err == nil
}

// convertible reports whether a stored value (in its text form) of type
// from converts to type to under the rules above.
func convertible(from, to DBType, s string) bool {
	if to == DBText {
		return true
	}
	t := strings.TrimSpace(s)
	if t == "" && (from == DBText || from == DBDate) {
		return true // becomes NULL
	}
	switch from {
	case DBText:
		switch to {
		case DBInt:
			return intText.MatchString(t)
		case DBFloat:
			return floatText.MatchString(t)
		case DBDate:
			return validDate(t)
		case DBBool:
			l := strings.ToLower(t)
			return slices.Contains(trueWords, l) || slices.Contains(falseWords, l)
		}
	case DBDate:
		return to == DBDate && validDate(t)
	}
	v, ok := number(from, s)
	switch {
	case !ok:
		return false
	case to == DBInt:
		return v == math.Trunc(v) && math.Abs(v) <= maxExactFloat
	case to == DBBool:
		return v == 0 || v == 1
	}
	return to == DBFloat
}

func validDate(s string) bool {
	if !dateText.MatchString(s) {
		return false
	}
	d, err := time.Parse(time.DateOnly, s)
	return err == nil && d.Year() >= 1
}

// textForm is the SQL giving a stored value's text form: PostgreSQL dates
// are formatted explicitly, since their default output follows DateStyle.
func textForm(e store.Engine, from DBType, col string) string {
	if e == store.Postgres && from == DBDate {
		return `to_char(` + col + `, 'YYYY-MM-DD')`
	}
	return `CAST(` + col + ` AS TEXT)`
}

// checkConversion refuses the change when any stored value would not
// convert, naming how many and the ids of the first few rows.
func checkConversion(ctx context.Context, tx *store.DB, t *Table, f *Field, to DBType) error {
	col := tx.Engine.Quote(f.Name)
	rows, err := tx.Query(ctx, `SELECT "id", `+textForm(tx.Engine, f.DBType, col)+` FROM `+tx.Qualify(t.Name)+
		` WHERE `+col+` IS NOT NULL ORDER BY "id"`)
	if err != nil {
		return fmt.Errorf("read %s.%s: %w", t.Name, f.Name, err)
	}
	defer rows.Close()
	var bad int64
	ids := []int64{}
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			return fmt.Errorf("read %s.%s: %w", t.Name, f.Name, err)
		}
		if !convertible(f.DBType, to, s) {
			bad++
			if len(ids) < maxConversionExamples {
				ids = append(ids, id)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s.%s: %w", t.Name, f.Name, err)
	}
	if bad > 0 {
		return ErrConversionFailed.With("field", f.Name).With("from", f.DBType).With("to", to).
			With("count", bad).With("ids", ids)
	}
	return nil
}

// convertExpr is the SQL computing the new value from col (never NULL:
// callers skip NULLs or let them propagate).
func convertExpr(e store.Engine, from, to DBType, col string) string {
	blankNull := `NULLIF(trim(` + col + `), '')`
	words := func(ws []string) string { return `('` + strings.Join(ws, `', '`) + `')` }
	if e == store.Postgres {
		target := sqlType(e, to)
		switch {
		case from == DBText && to == DBBool:
			return `CASE WHEN lower(trim(` + col + `)) IN ` + words(trueWords) + ` THEN true WHEN lower(trim(` + col +
				`)) IN ` + words(falseWords) + ` THEN false END`
		case from == DBText:
			return `CAST(` + blankNull + ` AS ` + target + `)`
		case from == DBDate && to == DBText:
			return `to_char(` + col + `, 'YYYY-MM-DD')`
		case from == DBDate, to == DBDate:
			return `CAST(NULL AS ` + target + `)` // only blanks got here
		case to == DBBool:
			return `(` + col + ` <> 0)`
		case from == DBBool && to != DBText:
			return `CAST(CAST(` + col + ` AS integer) AS ` + target + `)`
		case from == DBFloat && to == DBInt:
			return `CAST(round(` + col + `) AS bigint)`
		}
		return `CAST(` + col + ` AS ` + target + `)`
	}
	switch {
	case from == DBText && to == DBBool:
		return `CASE WHEN lower(trim(` + col + `)) IN ` + words(trueWords) + ` THEN 1 WHEN lower(trim(` + col +
			`)) IN ` + words(falseWords) + ` THEN 0 END`
	case from == DBText && to == DBDate:
		return blankNull
	case from == DBText:
		return `CAST(` + blankNull + ` AS ` + sqlType(e, to) + `)`
	case from == DBDate && to == DBText:
		return col
	case from == DBDate, to == DBDate:
		return `NULL`
	case from == DBBool && to == DBText:
		return `CASE WHEN ` + col + ` <> 0 THEN 'true' ELSE 'false' END`
	case from == DBFloat && to == DBText:
		return `printf('%.15g', ` + col + `)` // integral values without ".0", as PostgreSQL prints them
	case to == DBBool:
		return `CASE WHEN ` + col + ` <> 0 THEN 1 ELSE 0 END`
	case from == DBFloat && to == DBInt:
		return `CAST(round(` + col + `) AS INTEGER)`
	}
	return `CAST(` + col + ` AS ` + sqlType(e, to) + `)`
}

// convertColumn changes the storage of f to type to, converting the data,
// after checkConversion accepted every value. fieldIndexDropped reports
// that f's own index is gone and must be created again by the caller.
//
// PostgreSQL alters the column in place (ALTER COLUMN ... TYPE ... USING).
// SQLite cannot change a column's type; rebuilding the table is not an
// option (with foreign keys on, dropping the old table would delete the
// rows of its plugin tables), so a new column is added, filled, the old one
// dropped and the new one renamed, the indexes on it being dropped first
// (SQLite refuses to drop an indexed column) and created again after.
func convertColumn(ctx context.Context, tx *store.DB, st *state, t *Table, f *Field, to DBType) (fieldIndexDropped bool, err error) {
	if err := checkConversion(ctx, tx, t, f, to); err != nil {
		return false, err
	}
	// The search index folds the column as text: it goes first, and the
	// change that converts builds it again if the field still asks for it.
	if err := dropSearchIndex(ctx, tx, f); err != nil {
		return false, err
	}
	q, col := tx.Qualify(t.Name), tx.Engine.Quote(f.Name)
	expr := convertExpr(tx.Engine, f.DBType, to, col)
	if tx.Engine == store.Postgres {
		_, err := tx.Exec(ctx, `ALTER TABLE `+q+` ALTER COLUMN `+col+` TYPE `+sqlType(tx.Engine, to)+` USING `+expr)
		return false, conversionError(t, f, err)
	}
	if sqlType(tx.Engine, f.DBType) == sqlType(tx.Engine, to) {
		// Same storage class (text ↔ date, int ↔ bool): rewrite in place.
		_, err := tx.Exec(ctx, `UPDATE `+q+` SET `+col+` = `+expr+` WHERE `+col+` IS NOT NULL`)
		return false, conversionError(t, f, err)
	}
	tmp, err := spareColumn(ctx, tx, t, f)
	if err != nil {
		return false, err
	}
	var userIdx []*Index
	stmts := []string{}
	if f.indexKind() != noIndex {
		stmts = append(stmts, dropIndexSQL(tx, fieldIndexRawName(f)))
	}
	for _, ix := range st.indexes {
		if ix.Table == t.Name && slices.Contains(ix.Columns, f.Name) {
			userIdx = append(userIdx, ix)
			stmts = append(stmts, dropIndexSQL(tx, ix.Name))
		}
	}
	qtmp := tx.Engine.Quote(tmp)
	stmts = append(stmts,
		`ALTER TABLE `+q+` ADD COLUMN `+qtmp+` `+sqlType(tx.Engine, to),
		`UPDATE `+q+` SET `+qtmp+` = `+expr+` WHERE `+col+` IS NOT NULL`,
		`ALTER TABLE `+q+` DROP COLUMN `+col,
		`ALTER TABLE `+q+` RENAME COLUMN `+qtmp+` TO `+col,
	)
	if err := execAll(ctx, tx, "convert "+t.Name+"."+f.Name, stmts...); err != nil {
		return false, err
	}
	for _, ix := range userIdx {
		if err := createIndex(ctx, tx, ix); err != nil {
			return false, err
		}
	}
	return true, nil
}

// conversionError names a value the engine refused after all (a safety
// net: checkConversion should have caught it) or a unique index that the
// converted values no longer satisfy.
func conversionError(t *Table, f *Field, err error) error {
	switch {
	case err == nil:
		return nil
	case isDataException(err):
		return ErrConversionFailed.With("field", f.Name).Wrap(err)
	case isUniqueViolation(err):
		return ErrUniqueViolated.With("field", f.Name).Wrap(err)
	}
	return fmt.Errorf("convert %s.%s: %w", t.Name, f.Name, err)
}

// spareColumn picks a free column name for a conversion's new column.
func spareColumn(ctx context.Context, tx *store.DB, t *Table, f *Field) (string, error) {
	cols, err := physicalColumns(ctx, tx, t.Name)
	if err != nil {
		return "", err
	}
	for i := 0; ; i++ {
		name := fmt.Sprintf("conv_%d_%d", f.ID, i)
		if !slices.ContainsFunc(cols, func(c PhysicalColumn) bool { return c.Name == name }) {
			return name, nil
		}
	}
}
