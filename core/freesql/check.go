package freesql

import (
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
)

// Kind is what a statement does.
type Kind int

const (
	Read  Kind = iota // SELECT, WITH without a write, VALUES, EXPLAIN
	Write             // INSERT, UPDATE, DELETE (REPLACE on SQLite)
)

var (
	// ErrNotAllowed: the statement is of a kind, or names something, free
	// SQL never runs.
	ErrNotAllowed = errs.New(errs.Forbidden, "statement_not_allowed", "free SQL runs one SELECT, INSERT, UPDATE or DELETE on this application's tables")
	errNoSQL      = errs.New(errs.Invalid, "parameter_missing", "sql is required")
)

func errUnterminated(what string) error {
	return errs.New(errs.Invalid, "sql_error", "the statement cannot be read").With("detail", "an unterminated "+what)
}

// forbidden are names no statement may contain, as a word or a quoted
// identifier, whatever their case: what reaches beyond the app's own
// tables (other databases and files, the engine's catalogs and settings)
// and the app's credentials (accounts, keys, sealed settings). Every name
// starting with pg_ or sqlite_ is refused too (the engines' catalogs and
// functions), and information_schema.
var forbidden = map[string]bool{
	"attach": true, "detach": true, "vacuum": true, "pragma": true, "load_extension": true,
	"readfile": true, "writefile": true, "fts3_tokenizer": true,
	"information_schema": true, "dblink": true, "lo_import": true, "lo_export": true, "lo_get": true, "lo_put": true,
	"set_config": true, "current_setting": true,
	"sys_users": true, "sys_api_keys": true, "sys_settings": true, "sys_login_attempts": true,
}

// Classify checks that sql is one statement free SQL may run and says
// whether it reads or writes. It reads the statement as the engines do
// (quotes, comments, dollar strings), so a forbidden name cannot hide in
// a comment's shadow or behind quotes.
func Classify(sql string) (Kind, error) {
	toks, err := lex(sql)
	if err != nil {
		return 0, err
	}
	for len(toks) > 0 && toks[len(toks)-1].kind == tokPunct && toks[len(toks)-1].text == ";" {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return 0, errNoSQL
	}
	writes := false
	for i, t := range toks {
		switch t.kind {
		case tokPunct:
			if t.text == ";" {
				return 0, ErrNotAllowed.With("detail", "one statement at a time")
			}
		case tokWord, tokQuoted:
			if forbidden[t.text] || strings.HasPrefix(t.text, "pg_") || strings.HasPrefix(t.text, "sqlite_") {
				return 0, ErrNotAllowed.With("detail", "the statement names "+t.text)
			}
			if t.kind == tokWord && i > 0 {
				switch t.text {
				case "insert", "update", "delete", "replace":
					writes = true
				}
			}
		}
	}
	first := toks[0]
	if first.kind != tokWord {
		return 0, ErrNotAllowed.With("detail", "a statement starts with a keyword")
	}
	switch first.text {
	case "select", "values":
		// A SELECT cannot write ("update" in it is FOR UPDATE, "replace"
		// the function).
		return Read, nil
	case "with":
		if writes {
			return Write, nil // a data-modifying CTE (PostgreSQL)
		}
		return Read, nil
	case "explain":
		if len(toks) > 1 && toks[1].kind == tokWord && (toks[1].text == "analyze" || toks[1].text == "analyse") {
			return 0, ErrNotAllowed.With("detail", "EXPLAIN ANALYZE runs the statement; run it, or EXPLAIN it")
		}
		if writes {
			return 0, ErrNotAllowed.With("detail", "EXPLAIN of a write")
		}
		return Read, nil
	case "insert", "update", "delete", "replace":
		return Write, nil
	}
	return 0, ErrNotAllowed.With("detail", strings.ToUpper(first.text)+" statements are not run")
}
