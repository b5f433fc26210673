package schema

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	sqlite "modernc.org/sqlite"
)

// sqliteConstraint is SQLITE_CONSTRAINT; the driver may report it with an
// extended code in the upper bits.
const sqliteConstraint = 19

// pgCode returns the SQLSTATE of a PostgreSQL error ("" otherwise).
func pgCode(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code
	}
	return ""
}

// isUniqueViolation reports whether err is a unique-index violation, as
// CREATE UNIQUE INDEX over duplicate values reports it on both engines.
func isUniqueViolation(err error) bool {
	if pgCode(err) == "23505" {
		return true
	}
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqliteConstraint && strings.Contains(se.Error(), "UNIQUE")
}

// isForeignKeyViolation reports whether err is PostgreSQL refusing a
// foreign key that existing rows violate (SQLite never validates one).
func isForeignKeyViolation(err error) bool { return pgCode(err) == "23503" }

// isDataException reports whether err is PostgreSQL failing to convert a
// value (SQLSTATE class 22: invalid text, out of range, bad date).
func isDataException(err error) bool { return strings.HasPrefix(pgCode(err), "22") }
