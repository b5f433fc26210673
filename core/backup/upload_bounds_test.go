package backup_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/backup"
	"github.com/strata-archaeo/strata/core/scratch"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// zeroReader is n zero bytes.
type zeroReader struct{ n int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), z.n)]
	clear(p)
	z.n -= int64(len(p))
	return len(p), nil
}

// bombArchive is a well-formed archive whose one table part is size zero
// bytes (checksums right), declared as declared: a few hundred KB that
// inflate to size.
func bombArchive(t *testing.T, size, declared int64) []byte {
	t.Helper()
	h := sha256.New()
	io.Copy(h, &zeroReader{size})
	m := backup.Manifest{Format: backup.Format, FormatVersion: backup.FormatVersion, App: "dig", Engine: "sqlite",
		Tables: []backup.Table{{Name: "sys_padding", Part: backup.Part{Path: "tables/sys_padding.ndjson", Size: declared, SHA256: hex.EncodeToString(h.Sum(nil))}}}}
	head, _ := json.Marshal(m)
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "manifest.json", Mode: 0o600, Size: int64(len(head)), Typeflag: tar.TypeReg})
	tw.Write(head)
	tw.WriteHeader(&tar.Header{Name: "tables/sys_padding.ndjson", Mode: 0o600, Size: size, Typeflag: tar.TypeReg})
	io.Copy(tw, &zeroReader{size})
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// An uploaded archive is bounded as it streams, not after: a gzip bomb
// (a few hundred KB of zeros that inflate over 200:1) and a manifest
// declaring more than an upload of this size may hold are refused with
// backup_inflation, nothing is kept, and nothing is spooled to disk.
func TestUploadedGzipBombsAreRefused(t *testing.T) {
	bomb := bombArchive(t, 150<<20, 150<<20)
	liar := bombArchive(t, 1<<20, 400<<20)
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		data := t.TempDir()
		tmp, err := scratch.Open(data)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tmp.Close() })
		inst := testenv.NewInstanceWith(t, e, server.Deps{Scratch: tmp}, func(c *config.Config) {
			c.DataDir = data
			c.MaxBackupUploadBytes = 1 << 20
		})
		testenv.NewApp(t, inst.Apps, "dig")
		admin := testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
		for name, archive := range map[string][]byte{"a gzip bomb": bomb, "a manifest declaring too much": liar} {
			code, out := testenv.DoMultipart(t, inst.Server, "/dig/api/backups/upload", admin, nil,
				testenv.FormFile{Field: "file", Name: "x.tar.gz", Data: archive})
			if code != 400 || out["code"] != "backup_inflation" {
				t.Fatalf("%s (%d KB): %d %v", name, len(archive)>>10, code, out)
			}
		}
		testenv.Scenario{Name: "nothing kept", URL: "/dig/api/backups", Headers: testenv.Bearer(admin),
			ExpectedStatus: 200, ExpectedContent: []string{`"backups":[]`}}.Run(t, inst.Server)
		left, _ := filepath.Glob(filepath.Join(tmp.Path(), "*"))
		for _, p := range left {
			if filepath.Base(p) != "strata.lock" {
				t.Fatalf("left in the temporary folder: %v", left)
			}
		}
		if _, err := os.Stat(filepath.Join(data, "backups", "dig")); err == nil {
			entries, _ := os.ReadDir(filepath.Join(data, "backups", "dig"))
			if len(entries) != 0 {
				t.Fatalf("backups folder holds %d entries", len(entries))
			}
		}
	})
}
