package dbml

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is a syntax error at a place of the source.
type Error struct {
	Pos
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
}

type tokKind int

const (
	tEOF     tokKind = iota
	tNewline         // significant: a column or an entry ends at the line's end
	tWord            // a bare name, keyword or number: letters, digits, _ and one inner . between digits
	tQuoted          // "a quoted name"
	tString          // 'a string' or '''a multi-line string'''
	tExpr            // `an expression`
	tColor           // #3498db
	tPunct           // { } [ ] ( ) , : . < > - <>
	tComment         // // ... or /* ... */ (text without the markers)
)

type token struct {
	kind tokKind
	text string
	pos  Pos
}

func (t token) is(p string) bool { return t.kind == tPunct && t.text == p }

// keyword reports whether t is the bare word w, in any case.
func (t token) keyword(w string) bool { return t.kind == tWord && strings.EqualFold(t.text, w) }

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "the end of the text"
	case tNewline:
		return "the end of the line"
	case tString:
		return "a string"
	case tQuoted:
		return fmt.Sprintf("%q", t.text)
	case tExpr:
		return "an expression"
	case tComment:
		return "a comment"
	}
	return fmt.Sprintf("%q", t.text)
}

// lexer turns the source into tokens, keeping line and column (counted in
// characters) of each. String contents are the source's own bytes where no
// escape applies, so invalid UTF-8 survives a print and re-parse unchanged.
type lexer struct {
	src       string
	i         int
	line, col int
	toks      []token
}

func lex(src string) ([]token, error) {
	l := &lexer{src: src, line: 1, col: 1}
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		l.toks = append(l.toks, t)
		if t.kind == tEOF {
			return l.toks, nil
		}
	}
}

func (l *lexer) pos() Pos { return Pos{Line: l.line, Column: l.col} }

func (l *lexer) errf(p Pos, format string, args ...any) error {
	return &Error{Pos: p, Message: fmt.Sprintf(format, args...)}
}

// peek is the rune at offset i+k bytes (k counts bytes, for ASCII look-ahead).
func (l *lexer) at(k int) byte {
	if l.i+k < len(l.src) {
		return l.src[l.i+k]
	}
	return 0
}

// advance moves over one rune and returns it with its bytes.
func (l *lexer) advance() (rune, string) {
	r, size := utf8.DecodeRuneInString(l.src[l.i:])
	raw := l.src[l.i : l.i+size]
	l.i += size
	if r == '\n' {
		l.line++
		l.col = 1
	} else {
		l.col++
	}
	return r, raw
}

func isWordRune(r rune) bool {
	return r == '_' || (r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (l *lexer) next() (token, error) {
	for l.i < len(l.src) {
		c := l.src[l.i]
		if c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' {
			l.advance()
			continue
		}
		break
	}
	p := l.pos()
	if l.i >= len(l.src) {
		return token{kind: tEOF, pos: p}, nil
	}
	c := l.src[l.i]
	switch {
	case c == '\n':
		l.advance()
		return token{kind: tNewline, text: "\n", pos: p}, nil
	case c == '/' && l.at(1) == '/':
		start := l.i + 2
		for l.i < len(l.src) && l.src[l.i] != '\n' {
			l.advance()
		}
		return token{kind: tComment, text: l.src[start:l.i], pos: p}, nil
	case c == '/' && l.at(1) == '*':
		l.advance()
		l.advance()
		start := l.i
		for l.i < len(l.src) {
			if l.src[l.i] == '*' && l.at(1) == '/' {
				text := l.src[start:l.i]
				l.advance()
				l.advance()
				return token{kind: tComment, text: text, pos: p}, nil
			}
			l.advance()
		}
		return token{}, l.errf(p, "unterminated comment: /* has no */")
	case c == '\'':
		if l.at(1) == '\'' && l.at(2) == '\'' {
			return l.tripleString(p)
		}
		return l.quoted(p, '\'', tString)
	case c == '"':
		return l.quoted(p, '"', tQuoted)
	case c == '`':
		l.advance()
		start := l.i
		for l.i < len(l.src) && l.src[l.i] != '`' {
			if l.src[l.i] == '\n' {
				return token{}, l.errf(p, "unterminated expression: ` has no closing ` on its line")
			}
			l.advance()
		}
		if l.i >= len(l.src) {
			return token{}, l.errf(p, "unterminated expression: ` has no closing `")
		}
		text := l.src[start:l.i]
		l.advance()
		return token{kind: tExpr, text: text, pos: p}, nil
	case c == '#':
		l.advance()
		start := l.i
		for l.i < len(l.src) && isHex(l.src[l.i]) {
			l.advance()
		}
		if l.i == start {
			return token{}, l.errf(p, "a color is # followed by hexadecimal digits")
		}
		return token{kind: tColor, text: "#" + l.src[start:l.i], pos: p}, nil
	case c == '<' && l.at(1) == '>':
		l.advance()
		l.advance()
		return token{kind: tPunct, text: "<>", pos: p}, nil
	case strings.IndexByte("{}[](),:.<>-", c) >= 0:
		l.advance()
		return token{kind: tPunct, text: string(c), pos: p}, nil
	}
	r, _ := utf8.DecodeRuneInString(l.src[l.i:])
	if !isWordRune(r) {
		if r == utf8.RuneError {
			return token{}, l.errf(p, "invalid character (not UTF-8)")
		}
		return token{}, l.errf(p, "unexpected character %q", r)
	}
	start := l.i
	for l.i < len(l.src) {
		r, _ := utf8.DecodeRuneInString(l.src[l.i:])
		if !isWordRune(r) {
			break
		}
		l.advance()
	}
	// A decimal number is one word: 1.5 (but t.col stays three tokens).
	if allDigits(l.src[start:l.i]) && l.at(0) == '.' && l.at(1) >= '0' && l.at(1) <= '9' {
		l.advance()
		for l.i < len(l.src) && l.src[l.i] >= '0' && l.src[l.i] <= '9' {
			l.advance()
		}
	}
	return token{kind: tWord, text: l.src[start:l.i], pos: p}, nil
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// quoted reads a one-line string or quoted name. Escapes: \\, \<quote>,
// \n, \t, \r; any other backslash is kept as written.
func (l *lexer) quoted(p Pos, q byte, kind tokKind) (token, error) {
	l.advance()
	var b strings.Builder
	for {
		if l.i >= len(l.src) || l.src[l.i] == '\n' {
			what := "string"
			if kind == tQuoted {
				what = "quoted name"
			}
			return token{}, l.errf(p, "unterminated %s: %c has no closing %c on its line", what, q, q)
		}
		c := l.src[l.i]
		if c == q {
			l.advance()
			return token{kind: kind, text: b.String(), pos: p}, nil
		}
		if c == '\\' && l.i+1 < len(l.src) {
			switch e := l.src[l.i+1]; e {
			case '\\', q:
				b.WriteByte(e)
				l.advance()
				l.advance()
				continue
			case 'n', 't', 'r':
				b.WriteByte(unescape(e))
				l.advance()
				l.advance()
				continue
			}
		}
		_, raw := l.advance()
		b.WriteString(raw)
	}
}

func unescape(e byte) byte {
	switch e {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	}
	return '\r'
}

// tripleString reads a string between three single quotes (may span
// lines). Escapes: two backslashes and backslash-quote.
func (l *lexer) tripleString(p Pos) (token, error) {
	l.advance()
	l.advance()
	l.advance()
	var b strings.Builder
	for {
		if l.i >= len(l.src) {
			return token{}, l.errf(p, "unterminated string: ''' has no closing '''")
		}
		c := l.src[l.i]
		if c == '\'' && l.at(1) == '\'' && l.at(2) == '\'' {
			l.advance()
			l.advance()
			l.advance()
			return token{kind: tString, text: b.String(), pos: p}, nil
		}
		if c == '\\' && (l.at(1) == '\\' || l.at(1) == '\'') {
			b.WriteByte(l.at(1))
			l.advance()
			l.advance()
			continue
		}
		_, raw := l.advance()
		b.WriteString(raw)
	}
}
