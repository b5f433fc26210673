package imports

import (
	"regexp"
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// ErrBadPattern: a photo pattern that cannot match file names to records.
var ErrBadPattern = errs.New(errs.Invalid, "invalid_pattern", "a pattern has exactly one {field} and otherwise letters, digits, _ - . space, * (any text) and ? (one character)")

// Pattern matches photo file names to a field's value: "US_{code}_*.jpg"
// matches "US_1042_north.JPG" with code "1042". Matching is whole-name
// and case-insensitive (cameras write .JPG and .jpg alike).
type Pattern struct {
	Field string
	re    *regexp.Regexp
}

// maxPatternLen bounds a pattern (it becomes a regular expression).
const maxPatternLen = 200

// ParsePattern reads a pattern: literal characters, exactly one {field}
// naming a field (an identifier), * for any text and ? for one character.
func ParsePattern(p string) (*Pattern, error) {
	if p == "" || len(p) > maxPatternLen {
		return nil, ErrBadPattern
	}
	var re strings.Builder
	re.WriteString(`(?i)^`)
	field := ""
	runes := []rune(p)
	for i := 0; i < len(runes); i++ {
		switch ch := runes[i]; {
		case ch == '{':
			end := -1
			for j := i + 1; j < len(runes); j++ {
				if runes[j] == '}' {
					end = j
					break
				}
			}
			if end < 0 || field != "" {
				return nil, ErrBadPattern
			}
			name := string(runes[i+1 : end])
			if !store.ValidIdent(name) {
				return nil, ErrBadPattern.With("field", name)
			}
			// A wildcard right after the value would make it ambiguous.
			if end+1 < len(runes) && (runes[end+1] == '*' || runes[end+1] == '?') {
				return nil, ErrBadPattern.With("detail", "{"+name+"} must be followed by a literal character or the end")
			}
			field = name
			// Lazy, so that the literal after it ends the value.
			re.WriteString(`(.+?)`)
			i = end
		case ch == '*':
			re.WriteString(`.*?`)
		case ch == '?':
			re.WriteString(`.`)
		case ch == '}' || ch == '/' || ch == '\\' || ch < 0x20 || ch == 0xFFFD:
			return nil, ErrBadPattern
		default:
			re.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	if field == "" {
		return nil, ErrBadPattern
	}
	re.WriteString(`$`)
	compiled, err := regexp.Compile(re.String())
	if err != nil {
		return nil, ErrBadPattern
	}
	return &Pattern{Field: field, re: compiled}, nil
}

// Match is the field's value in name, or false when name does not match.
func (p *Pattern) Match(name string) (string, bool) {
	m := p.re.FindStringSubmatch(name)
	if m == nil || m[1] == "" {
		return "", false
	}
	return m[1], true
}
