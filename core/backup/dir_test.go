package backup_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/backup"
)

func TestBackupNames(t *testing.T) {
	good := backup.NewName("dig", time.Date(2026, 11, 26, 9, 5, 0, 0, time.UTC))
	if !strings.HasPrefix(good, "dig_20261126_090500_") || !backup.ValidName(good) {
		t.Fatalf("new name %q", good)
	}
	for _, bad := range []string{"", "../dig_20261126_090500_abcdef.tar.gz", "dig_20261126_090500_abcdef.tar.gz/..",
		"dig_2026112_090500_abcdef.tar.gz", "Dig_20261126_090500_abcdef.tar.gz", ".dig_20261126_090500_abcdef.tar.gz.partial",
		"dig_20261126_090500_abcdeg.tar.gz", "dig_20261126_090500_abcdef.tar"} {
		if backup.ValidName(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestDirCreateLeavesNothingOnFailure(t *testing.T) {
	ctx := context.Background()
	d := backup.Dir{Root: t.TempDir()}
	name := backup.NewName("dig", time.Now())
	boom := errors.New("boom")
	err := d.Create(ctx, "dig", name, func(w io.Writer) error {
		io.WriteString(w, "half an archive")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	ents, _ := os.ReadDir(filepath.Join(d.Root, "dig"))
	if len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
	if err := d.Create(ctx, "dig", name, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(d.Root, "dig", name))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v", info, err)
	}
	if _, err := d.Open(ctx, "dig", "../../etc/passwd"); !errors.Is(err, backup.ErrNotFound) {
		t.Fatalf("open outside: %v", err)
	}
	if err := d.Delete(ctx, "dig", name); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, "dig", name); !errors.Is(err, backup.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}
