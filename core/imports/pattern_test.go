package imports

import (
	"strings"
	"testing"
)

func TestPattern(t *testing.T) {
	cases := []struct {
		pattern, name, field, value string
		ok                          bool
	}{
		{"US_{code}_*.jpg", "US_1042_north.JPG", "code", "1042", true},
		{"US_{code}_*.jpg", "US_1042_.jpg", "code", "1042", true},
		{"US_{code}_*.jpg", "us_7_a_b.jpg", "code", "7", true},
		{"US_{code}_*.jpg", "US_1042.jpg", "", "", false},
		{"US_{code}_*.jpg", "XUS_1_a.jpg", "", "", false},
		{"{sigla}.png", "IMP001.PNG", "sigla", "IMP001", true},
		{"{sigla}.png", ".png", "", "", false},
		{"find-??-{n}.tif", "find-ab-12.tif", "n", "12", true},
		{"find-??-{n}.tif", "find-abc-12.tif", "", "", false},
		{"a+b({id}).jpg", "a+b(3).jpg", "id", "3", true},
	}
	for _, c := range cases {
		p, err := ParsePattern(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		v, ok := p.Match(c.name)
		if ok != c.ok || (ok && (v != c.value || p.Field != c.field)) {
			t.Errorf("%s on %s: %q %v, want %q %v", c.pattern, c.name, v, ok, c.value, c.ok)
		}
	}
	for _, bad := range []string{"", "no_field.jpg", "{a}*.jpg", "{a}?.jpg", "{a}{b}.jpg", "{}.jpg", "{Bad-Name}.jpg", "{a.jpg", "a}.jpg", "dir/{a}.jpg", "..\\{a}", strings.Repeat("x", 300) + "{a}"} {
		if _, err := ParsePattern(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzPattern: any pattern either is refused or compiles, and a name made
// from it by putting a value in place of {field} and nothing in place of
// the wildcards matches it with that value.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"US_{code}_*.jpg", "{a}", "x?{b}.png", "{c}-{d}", "(*{e})", "é{f}ü"} {
		f.Add(s, "4711")
		f.Add(s, "US 12")
	}
	f.Fuzz(func(t *testing.T, pattern, value string) {
		p, err := ParsePattern(pattern)
		if err != nil {
			return
		}
		if value == "" || strings.ContainsAny(value, "{}*?/\\") || !isPlain(value) {
			return
		}
		open := strings.IndexByte(pattern, '{')
		close := open + strings.IndexByte(pattern[open:], '}')
		after := strings.NewReplacer("*", "", "?", "x").Replace(pattern[close+1:])
		// The value ends at the first character of what follows it: a
		// value holding that character cannot be told apart.
		if after != "" {
			next := []rune(strings.ToLower(after))[0]
			if strings.ContainsRune(strings.ToLower(value), next) {
				return
			}
		}
		before := strings.NewReplacer("*", "", "?", "x").Replace(pattern[:open])
		got, ok := p.Match(before + value + after)
		if !ok || got != value {
			t.Fatalf("pattern %q, name %q: %q %v, want %q", pattern, before+value+after, got, ok, value)
		}
	})
}

func isPlain(s string) bool {
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			return false
		}
	}
	return true
}
