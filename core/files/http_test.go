package files

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
)

func TestContentDisposition(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"pianta.png", `attachment; filename="pianta.png"; filename*=UTF-8''pianta.png`},
		{"Località 3.pdf", `attachment; filename="Localit_ 3.pdf"; filename*=UTF-8''Localit%C3%A0%203.pdf`},
		{`a"b;c\d%e.txt`, `attachment; filename="a_b_c_d_e.txt"; filename*=UTF-8''a%22b%3Bc%5Cd%25e.txt`},
		{"it's.txt", `attachment; filename="it's.txt"; filename*=UTF-8''it%27s.txt`},
	} {
		if got := ContentDisposition("attachment", c.name); got != c.want {
			t.Errorf("%q: %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestCapReader(t *testing.T) {
	for _, c := range []struct {
		size, max int64
		tooLarge  bool
	}{{0, 10, false}, {10, 10, false}, {11, 10, true}, {1 << 20, 1000, true}} {
		got, err := io.ReadAll(CapReader(bytes.NewReader(bytes.Repeat([]byte("x"), int(c.size))), c.max))
		e, isErr := errs.As(err)
		switch {
		case c.tooLarge && (!isErr || e.Code != "too_large" || int64(len(got)) > c.max+1):
			t.Errorf("%d over %d: %d bytes, %v", c.size, c.max, len(got), err)
		case !c.tooLarge && (err != nil || int64(len(got)) != c.size):
			t.Errorf("%d within %d: %d bytes, %v", c.size, c.max, len(got), err)
		}
	}
	_, err := io.ReadAll(CapReader(strings.NewReader(""), 0))
	if errors.Is(err, io.EOF) {
		t.Error("EOF leaked")
	}
}
