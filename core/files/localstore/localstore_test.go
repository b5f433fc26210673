package localstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/files"
)

func TestPutGetStatDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(t.TempDir())
	data := bytes.Repeat([]byte("strata "), 10000)
	key, n, err := s.Put(ctx, "dig", bytes.NewReader(data))
	if err != nil || n != int64(len(data)) {
		t.Fatalf("put: %v %d", err, n)
	}
	if !files.ValidBlobName("dig", key) {
		t.Fatalf("key %q", key)
	}
	st, err := s.Stat(ctx, "dig", key)
	if err != nil || st.Size != int64(len(data)) {
		t.Fatalf("stat: %v %+v", err, st)
	}
	b, err := s.Get(ctx, "dig", key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Seek(7, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(b)
	b.Close()
	if !bytes.Equal(got, data[7:]) {
		t.Fatal("content differs after seek")
	}
	if _, err := s.Get(ctx, "other", key); !errors.Is(err, files.ErrBlobNotFound) {
		t.Fatalf("other app: %v", err)
	}
	if err := s.Delete(ctx, "dig", key); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "dig", key); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := s.Stat(ctx, "dig", key); !errors.Is(err, files.ErrBlobNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

type failing struct{ n int }

func (f *failing) Read(p []byte) (int, error) {
	if f.n > 3 {
		return 0, errors.New("connection reset")
	}
	f.n++
	return copy(p, "abcdefgh"), nil
}

func TestFailedPutLeavesNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s := New(root)
	if _, _, err := s.Put(context.Background(), "dig", &failing{}); err == nil {
		t.Fatal("expected error")
	}
	var left []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.Put(ctx, "dig", strings.NewReader("x")); err == nil {
		t.Fatal("cancelled put succeeded")
	}
}

func TestNamesCannotEscape(t *testing.T) {
	t.Parallel()
	s := New(t.TempDir())
	ctx := context.Background()
	for _, c := range []struct{ app, key string }{
		{"../etc", "0123456789abcdef0123456789abcdef"},
		{"dig", "../../../../etc/passwd"},
		{"dig", "0123456789ABCDEF0123456789ABCDEF"},
		{"", "0123456789abcdef0123456789abcdef"},
	} {
		if _, err := s.Get(ctx, c.app, c.key); !errors.Is(err, files.ErrBlobNotFound) {
			t.Errorf("get %q %q: %v", c.app, c.key, err)
		}
		if err := s.Delete(ctx, c.app, c.key); err == nil {
			t.Errorf("delete %q %q accepted", c.app, c.key)
		}
	}
	if _, _, err := s.Put(ctx, "../x", strings.NewReader("x")); err == nil {
		t.Fatal("put with a bad app name accepted")
	}
}
