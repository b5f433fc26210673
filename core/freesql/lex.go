package freesql

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is a token's kind.
type tokKind int

const (
	tokWord   tokKind = iota // a keyword or an unquoted identifier (lower-cased)
	tokQuoted                // a quoted identifier ("x", `x`, [x]), its name
	tokString                // a string literal
	tokNumber
	tokPunct // one character: ; ( ) , . and the rest
	tokParam // ?, $1, :name, @name
)

type token struct {
	kind tokKind
	text string
}

// lex splits one SQL text into tokens, dropping comments and blanks, for
// both engines' dialects: '...' strings (” escapes; E'...' backslash
// escapes), "..." `...` [...] identifiers, $tag$...$tag$ strings, -- and
// /* */ comments. An unterminated string, identifier or comment is an
// error: what cannot be read whole is not run.
func lex(sql string) ([]token, error) {
	var out []token
	i := 0
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case strings.HasPrefix(sql[i:], "--"):
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				i = len(sql)
			} else {
				i += j + 1
			}
		case strings.HasPrefix(sql[i:], "/*"):
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return nil, errUnterminated("comment")
			}
			i += j + 4
		case c == '\'' || ((c == 'e' || c == 'E') && i+1 < len(sql) && sql[i+1] == '\''):
			backslash := c != '\''
			if backslash {
				i++
			}
			s, n, err := quoted(sql[i:], '\'', backslash)
			if err != nil {
				return nil, err
			}
			out = append(out, token{tokString, s})
			i += n
		case c == '"' || c == '`':
			s, n, err := quoted(sql[i:], c, false)
			if err != nil {
				return nil, err
			}
			out = append(out, token{tokQuoted, strings.ToLower(s)})
			i += n
		case c == '[':
			j := strings.IndexByte(sql[i:], ']')
			if j < 0 {
				return nil, errUnterminated("identifier")
			}
			out = append(out, token{tokQuoted, strings.ToLower(sql[i+1 : i+j])})
			i += j + 1
		case c == '$' && i+1 < len(sql) && (sql[i+1] == '$' || isWordStart(rune(sql[i+1]))):
			// $tag$ ... $tag$ (PostgreSQL), or $1 / $name parameters.
			j := strings.IndexByte(sql[i+1:], '$')
			tag := ""
			if j >= 0 {
				tag = sql[i : i+j+2]
			}
			if tag != "" && isTag(tag[1:len(tag)-1]) {
				k := strings.Index(sql[i+len(tag):], tag)
				if k < 0 {
					return nil, errUnterminated("string")
				}
				out = append(out, token{tokString, sql[i+len(tag) : i+len(tag)+k]})
				i += len(tag) + k + len(tag)
				continue
			}
			n := wordLen(sql[i+1:])
			out = append(out, token{tokParam, sql[i : i+1+n]})
			i += 1 + n
		case c == '$' || c == '?' || c == ':' || c == '@':
			n := wordLen(sql[i+1:])
			if c == ':' && n == 0 {
				out = append(out, token{tokPunct, ":"})
				i++
				continue
			}
			out = append(out, token{tokParam, sql[i : i+1+n]})
			i += 1 + n
		case c >= '0' && c <= '9':
			j := i
			for j < len(sql) && (sql[j] >= '0' && sql[j] <= '9' || sql[j] == '.' || sql[j] == 'e' || sql[j] == 'E' || sql[j] == 'x' || sql[j] == 'X' ||
				(sql[j] >= 'a' && sql[j] <= 'f') || (sql[j] >= 'A' && sql[j] <= 'F') || sql[j] == '_') {
				j++
			}
			out = append(out, token{tokNumber, sql[i:j]})
			i = j
		default:
			r, size := utf8.DecodeRuneInString(sql[i:])
			if isWordStart(r) {
				n := wordLen(sql[i:])
				out = append(out, token{tokWord, strings.ToLower(sql[i : i+n])})
				i += n
				continue
			}
			out = append(out, token{tokPunct, sql[i : i+size]})
			i += size
		}
	}
	return out, nil
}

func isWordStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

// wordLen is the length of the identifier-like run at the start of s.
func wordLen(s string) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		if r != '_' && r != '$' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		n += size
	}
	return n
}

func isTag(t string) bool {
	for _, r := range t {
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// quoted reads a q-quoted text at the start of s (doubled q escapes it;
// with backslash, \x escapes too) and returns its content and length.
func quoted(s string, q byte, backslash bool) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch {
		case backslash && s[i] == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			i++
		case s[i] == q && i+1 < len(s) && s[i+1] == q:
			b.WriteByte(q)
			i++
		case s[i] == q:
			return b.String(), i + 1, nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", 0, errUnterminated("string or identifier")
}
