package filter

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// bindValue converts an operand's text form to the Go value bound for a
// column of type t. Numbers and dates may carry surrounding spaces (a
// comma-separated list "1, 2"); text is taken exactly as sent.
func bindValue(e store.Engine, t schema.DBType, s string) (any, bool) {
	switch t {
	case schema.DBInt:
		return parseInt(strings.TrimSpace(s))
	case schema.DBFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false
		}
		return f, true
	case schema.DBBool:
		b, ok := parseBool(strings.TrimSpace(s))
		if !ok {
			return nil, false
		}
		if e == store.SQLite {
			// SQLite stores booleans as 0/1 integers.
			if b {
				return int64(1), true
			}
			return int64(0), true
		}
		return b, true
	case schema.DBDate:
		d := strings.TrimSpace(s)
		// Year 0 parses in Go but is no date in PostgreSQL.
		if t, err := time.Parse("2006-01-02", d); err != nil || t.Year() < 1 {
			return nil, false
		}
		return d, true
	}
	return s, true
}

// parseInt accepts an integer, or a number with an integral value in range
// (a JSON client may send 3.0 or 1e3 for an id).
func parseInt(s string) (any, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return nil, false
	}
	return int64(f), true
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "1":
		return true, true
	case "false", "0":
		return false, true
	}
	return false, false
}

// typeWord names a storage type in error details.
func typeWord(t schema.DBType) string {
	switch t {
	case schema.DBInt:
		return "an integer"
	case schema.DBFloat:
		return "a number"
	case schema.DBBool:
		return "true or false"
	case schema.DBDate:
		return "a date (yyyy-mm-dd)"
	}
	return "text"
}
