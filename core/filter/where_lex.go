package filter

import (
	"strings"
	"unicode/utf8"
)

// The lexer of ParseWhere: words, quoted names and strings, numbers,
// comparison operators and punctuation. Everything else (';', comments,
// '.', '||', '$1', ...) is refused here, before any parsing.

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tQuotedIdent
	tString
	tNumber
	tOp // = <> != < <= > >=
	tLParen
	tRParen
	tComma
	tSign // - or + before a number
)

type token struct {
	kind tokKind
	text string // identifiers lower-cased; strings unescaped
	pos  int    // byte offset, for details
}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-', c == '/' && i+1 < len(s) && s[i+1] == '*':
			return nil, subsetf("comments are not allowed (at %d)", i)
		case c == ';':
			return nil, subsetf("only one condition is allowed: ';' at %d", i)
		case c == '(':
			out = append(out, token{tLParen, "(", i})
			i++
		case c == ')':
			out = append(out, token{tRParen, ")", i})
			i++
		case c == ',':
			out = append(out, token{tComma, ",", i})
			i++
		case c == '-' || c == '+':
			out = append(out, token{tSign, string(c), i})
			i++
		case c == '=':
			out = append(out, token{tOp, "=", i})
			i++
		case c == '<' || c == '>' || c == '!':
			op := string(c)
			if i+1 < len(s) && (s[i+1] == '=' || (c == '<' && s[i+1] == '>')) {
				op += string(s[i+1])
			}
			if op == "!" {
				return nil, subsetf("unexpected '!' at %d", i)
			}
			out = append(out, token{tOp, op, i})
			i += len(op)
		case c == '\'':
			str, n, ok := quoted(s[i:], '\'')
			if !ok {
				return nil, subsetf("unterminated string at %d", i)
			}
			out = append(out, token{tString, str, i})
			i += n
		case c == '"':
			name, n, ok := quoted(s[i:], '"')
			if !ok {
				return nil, subsetf("unterminated quoted name at %d", i)
			}
			out = append(out, token{tQuotedIdent, name, i})
			i += n
		case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
			j := i
			for j < len(s) && (isDigit(s[j]) || s[j] == '.') {
				j++
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				j++
				if j < len(s) && (s[j] == '-' || s[j] == '+') {
					j++
				}
				for j < len(s) && isDigit(s[j]) {
					j++
				}
			}
			if j < len(s) && isIdentChar(s[j]) {
				return nil, subsetf("malformed number at %d", i)
			}
			out = append(out, token{tNumber, s[i:j], i})
			i = j
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			out = append(out, token{tIdent, strings.ToLower(s[i:j]), i})
			i = j
		case c == '.':
			return nil, subsetf("qualified names are not allowed (at %d): name columns of the table alone", i)
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, subsetf("unexpected %q at %d", r, i)
		}
	}
	return append(out, token{kind: tEOF, pos: len(s)}), nil
}

// quoted reads a string or name delimited by q, with qq standing for q.
func quoted(s string, q byte) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != q {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", 0, false
}

func isDigit(c byte) bool      { return '0' <= c && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }
