package records

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

const isoDate = "2006-01-02"

// ToDB and FromDB convert values exactly as records does, for tables that
// are not user tables (the plugin host's system tables).
func ToDB(engine store.Engine, t schema.DBType, v any) (any, error) { return toDB(engine, t, v) }

// FromDB: see ToDB.
func FromDB(t schema.DBType, v any) any { return fromDB(t, v) }

// toDB converts a JSON value sent by a client into the value bound for a
// column of type t. Clients are liberal: numbers may come as strings,
// booleans as 0/1 or "true". An empty string clears a non-text field.
func toDB(engine store.Engine, t schema.DBType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if s, ok := v.(string); ok && t != schema.DBText && strings.TrimSpace(s) == "" {
		return nil, nil
	}
	switch t {
	case schema.DBText:
		if list, ok := v.([]any); ok {
			// multi_select values arrive as a list: stored as JSON text
			// (prepareRow refuses lists for other text fields).
			b, _ := json.Marshal(list)
			return string(b), nil
		}
		txt, err := wire.Text(v)
		if err != nil {
			return nil, fmt.Errorf("text is expected, not %s", wire.Describe(v))
		}
		return txt, nil
	case schema.DBInt:
		n, err := toInt(v)
		if err != nil {
			return nil, err
		}
		return n, nil
	case schema.DBFloat:
		f, err := toFloat(v)
		if err != nil {
			return nil, err
		}
		return f, nil
	case schema.DBBool:
		b, err := toBool(v)
		if err != nil {
			return nil, err
		}
		if engine == store.SQLite {
			if b {
				return int64(1), nil
			}
			return int64(0), nil
		}
		return b, nil
	case schema.DBDate:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("a date is a yyyy-mm-dd string")
		}
		d, err := time.Parse(isoDate, strings.TrimSpace(s))
		if err != nil && len(strings.TrimSpace(s)) > 10 {
			// A timestamp for a date field (what a database or a
			// spreadsheet gives back): its date part.
			d, err = time.Parse(isoDate, strings.TrimSpace(s)[:10])
		}
		if err != nil {
			return nil, fmt.Errorf("a date is a yyyy-mm-dd string")
		}
		return d.Format(isoDate), nil
	}
	return nil, fmt.Errorf("%s is not a value for this field", wire.Describe(v))
}

// The scalar rules are the API's one set (core/wire); values read back
// from the database (int64, float64) are accepted as well, so a duplicate
// or a restore can send a row through the same conversion.
func toInt(v any) (int64, error) {
	n, err := wire.Int(v)
	if err != nil {
		return 0, fmt.Errorf("an integer is expected")
	}
	return n, nil
}

func toFloat(v any) (float64, error) {
	f, err := wire.Float(v)
	if err != nil {
		return 0, fmt.Errorf("a number is expected")
	}
	return f, nil
}

func toBool(v any) (bool, error) {
	b, err := wire.Bool(v)
	if err != nil {
		return false, fmt.Errorf("true or false is expected")
	}
	return b, nil
}

// fromDB converts a scanned column value into its JSON form, the same on
// both engines: ints as numbers, booleans as booleans, dates as yyyy-mm-dd.
func fromDB(t schema.DBType, v any) any {
	if v == nil {
		return nil
	}
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	switch t {
	case schema.DBBool:
		switch x := v.(type) {
		case bool:
			return x
		case int64:
			return x != 0
		case string:
			b, _ := toBool(x)
			return b
		}
	case schema.DBInt:
		switch x := v.(type) {
		case int64:
			return x
		case float64:
			return int64(x)
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n
			}
		}
	case schema.DBFloat:
		switch x := v.(type) {
		case float64:
			return x
		case int64:
			return float64(x)
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				return f
			}
		}
	case schema.DBDate:
		switch x := v.(type) {
		case time.Time:
			return x.Format(isoDate)
		case string:
			if len(x) >= 10 {
				return x[:10]
			}
		}
	}
	return v
}
