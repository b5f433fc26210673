package records

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/strata-archaeo/strata/core/schema"
)

// FieldError is one failed rule of one field (CONTRACT §5).
type FieldError struct {
	Field   string `json:"field"`
	Label   string `json:"label"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Table   string `json:"table,omitempty"` // plugin table, for child rows
	Row     *int   `json:"row,omitempty"`   // index of the child row
	// Path points inside a JSON value when a plugin names it (e.g.
	// "individuals[0].bones.femur_left"); empty otherwise.
	Path string `json:"path,omitempty"`
}

var patternCache sync.Map // pattern text → *regexp.Regexp (anchored)

func compiledPattern(p string) (*regexp.Regexp, error) {
	if re, ok := patternCache.Load(p); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(`^(?:` + p + `)$`)
	if err != nil {
		return nil, err
	}
	patternCache.Store(p, re)
	return re, nil
}

// Rule names are BraDypUS's (its clients show messages by them): required,
// no_dupl, email, int, min, max, pattern; plus max_length, lookup and type.
const (
	RuleRequired = "required"
	RuleUnique   = "no_dupl"
	RuleEmail    = "email"
	RuleInt      = "int"
	RuleMin      = "min"
	RuleMax      = "max"
	RuleRegex    = "pattern"
	// RuleVocabulary refuses a value of a select bound to a vocabulary
	// that is not one of its items (schema.Field.VocabEnforced).
	RuleVocabulary = "vocabulary"
)

// patternRule names a failed pattern by what it stands for.
func patternRule(p string) string {
	switch p {
	case schema.EmailPattern:
		return RuleEmail
	case schema.IntPattern:
		return RuleInt
	}
	return RuleRegex
}

// typeRule names a value that does not convert to the field's storage.
func typeRule(f *schema.Field) string {
	if f.DBType == schema.DBInt {
		return RuleInt
	}
	return "type"
}

// checkValue applies the rules that need only the value itself. v is the
// converted value (nil when cleared).
func checkValue(f *schema.Field, v any) []FieldError {
	fe := func(rule, msg string) FieldError {
		return FieldError{Field: f.Name, Label: f.Label, Rule: rule, Message: msg}
	}
	var out []FieldError
	if v == nil || v == "" {
		if f.Required {
			out = append(out, fe(RuleRequired, "a value is required"))
		}
		return out
	}
	if s, ok := v.(string); ok {
		if f.MaxLength != nil && len([]rune(s)) > *f.MaxLength {
			out = append(out, fe("max_length", fmt.Sprintf("at most %d characters", *f.MaxLength)))
		}
		if f.DBType == schema.DBDate || f.Type == schema.TypeDate {
			// Date bounds (yyyy-mm-dd) compare as text.
			if lo := f.DateBound("min"); lo != "" && s < lo {
				out = append(out, fe(RuleMin, "not before "+lo))
			}
			if hi := f.DateBound("max"); hi != "" && s > hi {
				out = append(out, fe(RuleMax, "not after "+hi))
			}
		}
		if f.Type == schema.TypeLinkOut && !linkAllowed(s, f.LinkSchemes()) {
			out = append(out, fe("link", "a link is a relative URL or uses one of: "+strings.Join(f.LinkSchemes(), ", ")))
		}
		if f.Pattern != "" {
			if re, err := compiledPattern(f.Pattern); err == nil && !re.MatchString(s) {
				out = append(out, fe(patternRule(f.Pattern), "does not match the required pattern"))
			}
		}
	}
	var num *float64
	switch x := v.(type) {
	case int64:
		n := float64(x)
		num = &n
	case float64:
		num = &x
	}
	if num != nil {
		if f.Min != nil && *num < *f.Min {
			out = append(out, fe(RuleMin, fmt.Sprintf("at least %v", *f.Min)))
		}
		if f.Max != nil && *num > *f.Max {
			out = append(out, fe(RuleMax, fmt.Sprintf("at most %v", *f.Max)))
		}
	}
	return out
}

// msgNotChoosable refuses a lookup id the caller may not pick: one
// message whether the record does not exist or is out of the caller's
// reach, so that a save tells nothing about rows it cannot read.
const msgNotChoosable = "not a record you can choose"

// checkInDB applies the rules that look at other rows: uniqueness and the
// lookup's target, which must be a record the caller may read (its
// privilege and row subset on that table). selfID excludes the row being
// updated; an update may keep the id the row already holds.
func (s *Scope) checkInDB(ctx context.Context, t *schema.Table, f *schema.Field, v any, selfID int64) ([]FieldError, error) {
	if v == nil || v == "" {
		return nil, nil
	}
	db := s.DB
	var out []FieldError
	if f.Unique && (s.batch == nil || !s.batch.uniqueLater) {
		var n int
		err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Qualify(t.Name)+` WHERE `+db.Engine.Quote(f.Name)+` = ? AND "id" <> ?`, v, selfID).Scan(&n)
		if err != nil {
			return nil, fmt.Errorf("check unique %s: %w", f.Name, err)
		}
		if n > 0 {
			out = append(out, FieldError{Field: f.Name, Label: f.Label, Rule: RuleUnique, Message: "another record has this value"})
		}
	}
	if f.VocabEnforced() {
		bad, err := s.outsideVocabulary(ctx, t, f, v, selfID)
		if err != nil {
			return nil, fmt.Errorf("check vocabulary %s: %w", f.Name, err)
		}
		if len(bad) > 0 {
			out = append(out, FieldError{Field: f.Name, Label: f.Label, Rule: RuleVocabulary,
				Message: "not in the vocabulary " + f.VocabularySet + ": " + strings.Join(bad, ", ")})
		}
	}
	if f.IDFromTb != "" {
		ok, err := s.choosable(ctx, f.IDFromTb, v)
		if err == nil && !ok && selfID > 0 {
			ok, err = s.holds(ctx, t, f, selfID, v)
		}
		if err != nil {
			return nil, fmt.Errorf("check lookup %s: %w", f.Name, err)
		}
		if !ok {
			out = append(out, FieldError{Field: f.Name, Label: f.Label, Rule: "lookup", Message: msgNotChoosable})
		}
	}
	return out, nil
}

// choosable reports whether id is a record of table the caller may read.
func (s *Scope) choosable(ctx context.Context, table string, id any) (bool, error) {
	ref, ok := s.Catalog.Table(table)
	if !ok {
		return false, nil
	}
	acc, err := s.accessTo(ctx, ref)
	if err != nil || !acc.Readable() {
		return false, err
	}
	q := s.DB.Qualify(ref.Name)
	where, args := q+`."id" = ?`, []any{id}
	if c := acc.Restrict; c != nil && c.SQL != "" {
		where += ` AND (` + c.SQL + `)`
		args = append(args, c.Args...)
	}
	var n int
	if err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+q+` WHERE `+where, args...).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// holds reports whether row id of t, one the caller may see, already has
// value v in field f.
func (s *Scope) holds(ctx context.Context, t *schema.Table, f *schema.Field, id int64, v any) (bool, error) {
	acc, err := s.accessTo(ctx, t)
	if err != nil {
		return false, err
	}
	q := s.DB.Qualify(t.Name)
	where, args := q+`."id" = ? AND `+q+`.`+s.DB.Engine.Quote(f.Name)+` = ?`, []any{id, v}
	if c := acc.Restrict; c != nil && c.SQL != "" {
		where += ` AND (` + c.SQL + `)`
		args = append(args, c.Args...)
	}
	var n int
	err = s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+q+` WHERE `+where, args...).Scan(&n)
	return n > 0, err
}

// defaultValue resolves a field's def_value for an insert: %today% is the
// date, %current_user% the caller's name.
func defaultValue(f *schema.Field, s *Scope) (any, bool) {
	if f.DefValue == "" {
		return nil, false
	}
	switch strings.TrimSpace(f.DefValue) {
	case "%today%":
		return s.now().Format(isoDate), true
	case "%current_user%":
		return s.Actor.Name, true
	}
	return f.DefValue, true
}

// linkAllowed reports whether a link_out value is a relative URL or one
// whose scheme is in schemes. A scheme is what precedes the first ":"
// when no "/", "?" or "#" comes before it (RFC 3986); control characters
// and spaces inside it (which browsers strip) do not hide one.
func linkAllowed(v string, schemes []string) bool {
	v = strings.TrimSpace(v)
	cleaned := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == ' ' {
			return -1
		}
		return r
	}, v)
	i := strings.IndexAny(cleaned, ":/?#")
	if i < 0 || cleaned[i] != ':' {
		return true // relative: no scheme
	}
	scheme := strings.ToLower(cleaned[:i])
	for _, s := range schemes {
		if scheme == s {
			return true
		}
	}
	return false
}
