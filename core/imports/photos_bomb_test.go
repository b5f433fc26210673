package imports_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/demo"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// zipEntry is a ZIP entry whose bytes come from fill, written in chunks
// so a 200 MiB bomb never sits in the test's memory.
type zipEntry struct {
	name string
	size int
	fill func(p []byte)
	raw  *rawEntry // already deflated bytes, written as they are
}

// rawEntry is one deflated body that several entries share (deflating
// tens of MiB of noise for each would make the test slow).
type rawEntry struct {
	deflated []byte
	crc      uint32
	size     int
}

func deflated(t *testing.T, data []byte) *rawEntry {
	t.Helper()
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestSpeed)
	fw.Write(data)
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return &rawEntry{deflated: buf.Bytes(), crc: crc32.ChecksumIEEE(data), size: len(data)}
}

func buildZip(t *testing.T, entries []zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	chunk := make([]byte, 1<<20)
	for _, e := range entries {
		if e.raw != nil {
			w, err := zw.CreateRaw(&zip.FileHeader{Name: e.name, Method: zip.Deflate, CRC32: e.raw.crc,
				CompressedSize64: uint64(len(e.raw.deflated)), UncompressedSize64: uint64(e.raw.size)})
			if err != nil {
				t.Fatal(err)
			}
			w.Write(e.raw.deflated)
			continue
		}
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		for left := e.size; left > 0; left -= len(chunk) {
			p := chunk[:min(left, len(chunk))]
			e.fill(p)
			if _, err := w.Write(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A ZIP of photos is counted as it inflates, whatever its headers say:
// one photo past the upload limit, photos adding up past the ZIP's limit
// and a real ZIP bomb (200 MiB of zeros in a few hundred KB) are refused
// with their own codes, and nothing is kept.
func TestPhotoZipBombsAreRefused(t *testing.T) {
	const limit = 2 << 20 // the upload limit; a ZIP may be 16 times it
	rng := rand.New(rand.NewPCG(1, 2))
	zeros := func(p []byte) { clear(p) }
	noise := func(p []byte) {
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
	}
	// Two letters at random: about 1 bit a byte, so it deflates some six
	// times, as little as a photo might and far from a bomb's ratio.
	letters := make([]byte, limit-100<<10)
	for i := range letters {
		letters[i] = 'a' + byte(rng.Uint32()&1)
	}
	shared := deflated(t, letters)
	photo := func(i int) string { return "US_1_" + string(rune('a'+i)) + ".png" }
	many := make([]zipEntry, 18)
	for i := range many {
		many[i] = zipEntry{name: photo(i), raw: shared}
	}
	cases := []struct {
		name   string
		zip    []byte
		status int
		code   string
	}{
		{"a zip bomb", buildZip(t, []zipEntry{{name: photo(0), size: 200 << 20, fill: zeros}}), 400, "import_zip_inflation"},
		{"one photo past the upload limit", buildZip(t, []zipEntry{{name: photo(0), size: limit + 512<<10, fill: noise}}), 413, "import_photo_too_large"},
		{"photos past the ZIP's limit", buildZip(t, many), 413, "import_zip_too_large"},
	}
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		inst := testenv.NewInstance(t, e, func(c *config.Config) { c.MaxUploadBytes = limit })
		a := testenv.NewApp(t, inst.Apps, "dig")
		if err := demo.Seed(t.Context(), a, demo.Small, 1, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		admin := testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				data := tc.zip
				code, out := testenv.DoMultipart(t, inst.Server, "/dig/api/import/preview-photos", admin,
					map[string]string{"tb": "units", "pattern": "US_{code}_*.png"}, testenv.FormFile{Field: "zip", Name: "photos.zip", Data: data})
				if code != tc.status || out["code"] != tc.code {
					t.Fatalf("%d KB ZIP: %d %v", len(data)>>10, code, out)
				}
				stored := 0
				filepath.WalkDir(filepath.Join(inst.Config.DataDir, "files"), func(_ string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						stored++
					}
					return nil
				})
				if stored != 0 {
					t.Fatalf("%d blobs kept after a refused ZIP", stored)
				}
			})
		}
	})
}
