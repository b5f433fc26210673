package errs

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorMatchingAndCopies(t *testing.T) {
	base := New(NotFound, "app_not_found", "no such application")
	wrapped := fmt.Errorf("open: %w", base.Wrap(errors.New("stat failed")))

	if !errors.Is(wrapped, base) {
		t.Fatal("errors.Is should match by code through wrapping")
	}
	if errors.Is(wrapped, New(NotFound, "route_not_found", "")) {
		t.Fatal("different codes must not match")
	}
	if got := CodeOf(wrapped); got != "app_not_found" {
		t.Fatalf("CodeOf = %q", got)
	}
	if got := CodeOf(errors.New("plain")); got != "internal_error" {
		t.Fatalf("CodeOf(plain) = %q", got)
	}

	withExtra := base.With("allowed", []string{"GET"})
	if base.Extra != nil {
		t.Fatal("With must not modify the receiver")
	}
	if withExtra.Extra["allowed"] == nil {
		t.Fatal("With lost the key")
	}
}
