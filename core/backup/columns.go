package backup

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// Kind is how a column's values are written in an archive and read back.
type Kind string

const (
	KindInt   Kind = "int"
	KindFloat Kind = "float"
	KindBool  Kind = "bool"
	KindDate  Kind = "date" // "2006-01-02"
	KindTime  Kind = "time" // RFC 3339, UTC
	KindBytes Kind = "bytes"
	KindText  Kind = "text"
)

// kindOf maps an engine's declared column type to a Kind.
func kindOf(e store.Engine, declared string) Kind {
	d := strings.ToLower(strings.TrimSpace(declared))
	if e == store.Postgres {
		switch {
		case d == "bigint" || d == "integer" || d == "smallint":
			return KindInt
		case d == "double precision" || d == "real" || d == "numeric":
			return KindFloat
		case d == "boolean":
			return KindBool
		case d == "date":
			return KindDate
		case strings.HasPrefix(d, "timestamp"):
			return KindTime
		case d == "bytea":
			return KindBytes
		}
		return KindText
	}
	switch {
	case strings.Contains(d, "int"):
		return KindInt
	case strings.Contains(d, "real") || strings.Contains(d, "floa") || strings.Contains(d, "doub"):
		return KindFloat
	case strings.Contains(d, "bool"):
		return KindBool
	case d == "date":
		return KindDate
	case strings.Contains(d, "datetime") || strings.Contains(d, "timestamp"):
		return KindTime
	case strings.Contains(d, "blob"):
		return KindBytes
	}
	return KindText
}

// sqlTypeOf is the column type a restore gives a table the target lacks
// (a plugin's own table): the engine's type for the kind.
func sqlTypeOf(e store.Engine, k Kind) string {
	pg := e == store.Postgres
	switch k {
	case KindInt:
		return map[bool]string{true: "bigint", false: "INTEGER"}[pg]
	case KindFloat:
		return map[bool]string{true: "double precision", false: "REAL"}[pg]
	case KindBool:
		return map[bool]string{true: "boolean", false: "INTEGER"}[pg]
	case KindDate:
		return map[bool]string{true: "date", false: "TEXT"}[pg]
	case KindTime:
		return map[bool]string{true: "timestamptz", false: "DATETIME"}[pg]
	case KindBytes:
		return map[bool]string{true: "bytea", false: "BLOB"}[pg]
	}
	return map[bool]string{true: "text", false: "TEXT"}[pg]
}

// tableNames lists the app's tables an archive holds: every table but the
// engine's own and the search indexes (derived from the rows, rebuilt on
// restore).
func tableNames(ctx context.Context, db queryer, e store.Engine, schemaName string) ([]string, error) {
	var q string
	var args []any
	if e == store.Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name`
		args = []any{schemaName}
	} else {
		q = `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
	}
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		if strings.HasPrefix(n, "sys_search_") || !store.ValidIdent(n) {
			continue
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// columnsOf lists a table's columns with their kinds, in table order.
func columnsOf(ctx context.Context, db queryer, e store.Engine, schemaName, table string) ([]Column, error) {
	q, args := `SELECT name, type FROM pragma_table_info(?) ORDER BY cid`, []any{table}
	if e == store.Postgres {
		q = `SELECT column_name, data_type FROM information_schema.columns
			WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`
		args = []any{schemaName, table}
	}
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	defer rows.Close()
	var out []Column
	for rows.Next() {
		var n, t string
		if err := rows.Scan(&n, &t); err != nil {
			return nil, err
		}
		out = append(out, Column{Name: n, Kind: kindOf(e, t)})
	}
	return out, rows.Err()
}

// encodeValue turns a scanned value into its archive form for kind k.
func encodeValue(k Kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch k {
	case KindInt, KindFloat:
		switch x := v.(type) {
		case int64, int32, int:
			return x, nil
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, nil // not representable in JSON (nor in SQLite)
			}
			return x, nil
		case bool:
			if x {
				return 1, nil
			}
			return 0, nil
		case []byte:
			return json.Number(strings.TrimSpace(string(x))), nil
		case string:
			return json.Number(strings.TrimSpace(x)), nil
		}
	case KindBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			return x != 0, nil
		}
	case KindDate:
		switch x := v.(type) {
		case time.Time:
			return x.Format("2006-01-02"), nil
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case KindTime:
		switch x := v.(type) {
		case time.Time:
			return x.UTC().Format(time.RFC3339Nano), nil
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case KindBytes:
		switch x := v.(type) {
		case []byte:
			return base64.StdEncoding.EncodeToString(x), nil
		case string:
			return base64.StdEncoding.EncodeToString([]byte(x)), nil
		}
	default:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		case time.Time:
			return x.UTC().Format(time.RFC3339Nano), nil
		case int64, float64, bool:
			return x, nil
		}
	}
	return nil, fmt.Errorf("value of type %T in a %s column", v, k)
}

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"}

// decodeValue turns an archive value written as kind from into the value
// to bind for a column of kind to on engine e.
func decodeValue(e store.Engine, from, to Kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if from == KindBytes {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("bytes value is not base64 text")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("bytes value: %w", err)
		}
		if to == KindBytes {
			return b, nil
		}
		v = string(b)
	}
	switch to {
	case KindInt:
		switch x := v.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil {
				return n, nil
			}
			f, err := x.Float64()
			if err != nil || f != math.Trunc(f) {
				return nil, fmt.Errorf("%q is not an integer", x)
			}
			return int64(f), nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer", x)
			}
			return n, nil
		}
	case KindFloat:
		switch x := v.(type) {
		case json.Number:
			return x.Float64()
		case string:
			return strconv.ParseFloat(strings.TrimSpace(x), 64)
		}
	case KindBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case json.Number:
			return x.String() != "0", nil
		case string:
			return x == "1" || strings.EqualFold(x, "true"), nil
		}
	case KindDate:
		if s, ok := v.(string); ok {
			if e != store.Postgres {
				return s, nil
			}
			if len(s) >= 10 {
				if t, err := time.Parse("2006-01-02", s[:10]); err == nil {
					return t, nil
				}
			}
			return nil, fmt.Errorf("%q is not a date", s)
		}
	case KindTime:
		if s, ok := v.(string); ok {
			for _, l := range timeLayouts {
				if t, err := time.Parse(l, s); err == nil {
					return t.UTC(), nil
				}
			}
			return nil, fmt.Errorf("%q is not a time", s)
		}
	case KindBytes:
		if s, ok := v.(string); ok {
			return []byte(s), nil
		}
	default:
		switch x := v.(type) {
		case string:
			return x, nil
		case json.Number:
			return x.String(), nil
		case bool:
			if x {
				return "1", nil
			}
			return "0", nil
		}
	}
	return nil, fmt.Errorf("a %s value (%T) cannot go in a %s column", from, v, to)
}
