package nodelock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecondAcquireIsRefusedUntilRelease(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := Acquire(dir, "http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir, "http://127.0.0.1:8081")
	if !errors.Is(err, ErrHeld) {
		t.Fatalf("second acquire: %v, want ErrHeld", err)
	}
	for _, want := range []string{"http://127.0.0.1:8080", "pid ", "one node", "PostgreSQL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := Acquire(dir, "http://127.0.0.1:8081")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	defer again.Release()
	b, _ := os.ReadFile(filepath.Join(dir, FileName))
	if !strings.Contains(string(b), "8081") {
		t.Fatalf("lock file names %q, want the new holder", b)
	}
}

func TestReleaseTwiceAndNil(t *testing.T) {
	l, err := Acquire(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	var none *Lock
	if err := none.Release(); err != nil {
		t.Fatal(err)
	}
}
