package widgets

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
)

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"harris", true}, {"quire-matrix", true}, {"a1", true}, {"-", true}, {strings.Repeat("a", 64), true},
		{"", false}, {"My", false}, {"my_widget", false}, {"a.js", false}, {"../x", false}, {"a b", false},
		{"a\x00", false}, {"é", false}, {strings.Repeat("a", 65), false},
	} {
		if err := CheckName(tc.name); (err == nil) != tc.ok {
			t.Errorf("CheckName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestCheckModule(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  []byte
		code string
	}{
		{"module", []byte("export default {}"), ""},
		{"at the cap", bytes.Repeat([]byte("a"), MaxSize), ""},
		{"over the cap", bytes.Repeat([]byte("a"), MaxSize+1), "widget_too_large"},
		{"empty", nil, "invalid_widget"},
		{"blank", []byte(" \n\t"), "invalid_widget"},
		{"not UTF-8", []byte{0xff, 'a'}, "invalid_widget"},
		{"NUL", []byte("a\x00b"), "invalid_widget"},
	} {
		err := CheckModule(tc.src)
		var e *errs.Error
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.code != "" && (!errors.As(err, &e) || e.Code != tc.code):
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
}

func TestETagMatches(t *testing.T) {
	tag := ETag([]byte("x"))
	if tag != ETag([]byte("x")) || tag == ETag([]byte("y")) || !strings.HasPrefix(tag, `"`) {
		t.Fatalf("ETag not a stable strong tag of the bytes: %s", tag)
	}
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{tag, true}, {"W/" + tag, true}, {`"a", ` + tag, true}, {"*", true}, {` ` + tag + ` `, true},
		{"", false}, {`"a"`, false}, {strings.Trim(tag, `"`), false}, {",,", false},
	} {
		if got := etagMatches(tc.header, tag); got != tc.want {
			t.Errorf("etagMatches(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

// FuzzETagMatches: any If-None-Match header is answered without panic, and
// a header listing the tag always matches.
func FuzzETagMatches(f *testing.F) {
	for _, s := range []string{`"abc"`, `W/"abc", "d"`, "*", "", ",", `"`} {
		f.Add(s)
	}
	tag := ETag([]byte("module"))
	f.Fuzz(func(t *testing.T, header string) {
		etagMatches(header, tag)
		if !etagMatches(header+", "+tag, tag) {
			t.Fatalf("%q plus the tag does not match", header)
		}
	})
}
