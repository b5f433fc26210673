package filter_test

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// sqlWords is everything the renderer itself may write besides quoted
// identifiers and markers. checkSQL proves that no caller text reached the
// SQL: every token must be ours.
var sqlWords = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "IN": true, "IS": true, "NULL": true, "LIKE": true, "ESCAPE": true,
	"SELECT": true, "FROM": true, "WHERE": true, "AS": true, "CAST": true, "TEXT": true, "BETWEEN": true,
	"COLLATE": true, "date": true, "bigint": true, "json": true, "value": true, "instr": true, "strpos": true,
	"strata_fold": true, "to_char": true, "json_each": true, "json_array_elements_text": true,
	"CASE": true, "WHEN": true, "THEN": true, "ELSE": true, "END": true, "lower": true, "length": true, "BLOB": true, // store.FoldSQL on SQLite
	"0": true, "1": true,
	"rowid": true, "MATCH": true, // search indexes on SQLite (FTS5)
}

var sqlLiterals = map[string]bool{`\`: true, ``: true, `YYYY-MM-DD`: true}

var aliasPattern = regexp.MustCompile(`^s[0-9]+$|^sys_search_[0-9]+_[0-9]+$`)

// checkSQL tokenizes a rendered fragment and fails on any token the
// renderer does not write itself, and on a marker count that differs from
// the number of values.
func checkSQL(db *store.DB, cat *schema.Catalog, sql string, args []any) error {
	idents := map[string]bool{"id": true, "creator": true, "id_link": true, "C": true, "r": true}
	if db.Schema() != "" {
		idents[db.Schema()] = true
	}
	for _, t := range cat.Tables {
		idents[t.Name] = true
		for _, f := range t.Fields {
			idents[f.Name] = true
		}
	}
	marks := 0
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ':
			i++
		case strings.IndexByte("(),.=<>", c) >= 0:
			i++
		case c == '?':
			marks++
			i++
		case c == '"' || c == '\'':
			end := strings.IndexByte(sql[i+1:], c)
			if end < 0 {
				return fmt.Errorf("unterminated %c at %d in %s", c, i, sql)
			}
			tok := sql[i+1 : i+1+end]
			if c == '"' && !idents[tok] && !aliasPattern.MatchString(tok) {
				return fmt.Errorf("identifier %q is not from the catalog in %s", tok, sql)
			}
			if c == '\'' && !sqlLiterals[tok] {
				return fmt.Errorf("literal %q is not the renderer's in %s", tok, sql)
			}
			i += end + 2
		default:
			j := i
			for j < len(sql) && (sql[j] == '_' || ('a' <= sql[j] && sql[j] <= 'z') || ('A' <= sql[j] && sql[j] <= 'Z') || ('0' <= sql[j] && sql[j] <= '9')) {
				j++
			}
			if j == i {
				return fmt.Errorf("unexpected %q at %d in %s", c, i, sql)
			}
			if !sqlWords[sql[i:j]] {
				return fmt.Errorf("word %q is not the renderer's in %s", sql[i:j], sql)
			}
			i = j
		}
	}
	if marks != len(args) {
		return fmt.Errorf("%d markers for %d values in %s", marks, len(args), sql)
	}
	return nil
}
