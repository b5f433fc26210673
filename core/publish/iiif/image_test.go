package iiif

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"golang.org/x/image/tiff"

	"github.com/strata-archaeo/strata/core/publish/publishtest"
)

// memSink keeps every file in memory and enforces the Sink contract: one writer open at a
// time, each path created once, nothing written after Close.
type memSink struct {
	t     *testing.T
	files map[string][]byte
	order []string
	open  *memFile
	// failAt makes the n-th Create (1-based) fail, to test error paths.
	failAt int
}

type memFile struct {
	s      *memSink
	path   string
	buf    bytes.Buffer
	closed bool
}

func newMemSink(t *testing.T) *memSink { return &memSink{t: t, files: map[string][]byte{}} }

func (s *memSink) Create(p string) (io.WriteCloser, error) {
	if s.open != nil {
		s.t.Errorf("Create(%s) while %s is still open", p, s.open.path)
	}
	if _, dup := s.files[p]; dup {
		s.t.Errorf("Create(%s) twice", p)
	}
	if s.failAt > 0 && len(s.order)+1 == s.failAt {
		return nil, errors.New("disk full")
	}
	s.order = append(s.order, p)
	s.files[p] = nil
	s.open = &memFile{s: s, path: p}
	return s.open, nil
}

func (f *memFile) Write(b []byte) (int, error) {
	if f.closed {
		f.s.t.Errorf("write to %s after Close", f.path)
	}
	return f.buf.Write(b)
}

func (f *memFile) Close() error {
	if f.closed {
		f.s.t.Errorf("%s closed twice", f.path)
	}
	f.closed = true
	f.s.files[f.path] = f.buf.Bytes()
	f.s.open = nil
	return nil
}

// gradient is an opaque test image whose colour varies along both axes, so that a tile
// taken from the wrong place would show in its pixels.
func gradient(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / max(w-1, 1)), uint8(y * 255 / max(h-1, 1)), 128, 255})
		}
	}
	return m
}

func encodePNG(t *testing.T, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEGBytes(t *testing.T, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkService checks dir as a level 0 client would (publishtest.IIIFImageService: info.json
// by the rules of Image API 3.0, every URL the client may request a JPEG of the size it
// names), then that the sink holds exactly those files, that they are the Image's Paths and
// that its dimensions are info.json's. It returns the full image.
func checkService(t *testing.T, s *memSink, dir, serviceID string, got Image) image.Image {
	t.Helper()
	files := fstest.MapFS{}
	for p, b := range s.files {
		files[p] = &fstest.MapFile{Data: b}
	}
	want, err := publishtest.IIIFImageService(files, dir, serviceID)
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ Width, Height int }
	if err := json.Unmarshal(s.files[dir+"/info.json"], &info); err != nil {
		t.Fatal(err)
	}
	if got.Width != info.Width || got.Height != info.Height || got.ServiceID != serviceID {
		t.Errorf("returned %dx%d %s, info.json %dx%d", got.Width, got.Height, got.ServiceID, info.Width, info.Height)
	}
	var sizes int
	for _, p := range want {
		if strings.HasPrefix(p, dir+"/full/") && p != dir+"/full/max/0/default.jpg" {
			sizes++
		}
	}
	if len(got.Sizes) != sizes {
		t.Errorf("Image.Sizes %v, %d sizes published", got.Sizes, sizes)
	}
	var have []string
	for p := range s.files {
		have = append(have, p)
	}
	sort.Strings(have)
	if strings.Join(have, "\n") != strings.Join(want, "\n") {
		t.Errorf("files written differ from those a client computes:\n%v\n%v", have, want)
	}
	if strings.Join(have, "\n") != strings.Join(got.Paths, "\n") {
		t.Errorf("Image.Paths differ from the files written:\n%v\n%v", got.Paths, have)
	}
	full, err := jpeg.Decode(bytes.NewReader(s.files[dir+"/full/max/0/default.jpg"]))
	if err != nil {
		t.Fatal(err)
	}
	return full
}

func TestWriteImageSizes(t *testing.T) {
	webpBytes, err := os.ReadFile("testdata/blue-purple-pink.lossy.webp")
	if err != nil {
		t.Fatal(err)
	}
	tiffOf := func(m image.Image) []byte {
		var b bytes.Buffer
		if err := tiff.Encode(&b, m, nil); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	gifOf := func(m image.Image) []byte {
		var b bytes.Buffer
		if err := gif.Encode(&b, m, nil); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	cases := []struct {
		name           string
		src            []byte
		opt            ImageOptions
		wantW, wantH   int
		wantFactors    int
		wantTileCounts int // tiles over all levels
	}{
		{"1x1 png", encodePNG(t, gradient(1, 1)), ImageOptions{}, 1, 1, 1, 1},
		{"513x1 png", encodePNG(t, gradient(513, 1)), ImageOptions{}, 513, 1, 2, 3},
		{"1x513 jpeg", encodeJPEGBytes(t, gradient(1, 513)), ImageOptions{}, 1, 513, 2, 3},
		{"exactly one tile", encodePNG(t, gradient(512, 512)), ImageOptions{}, 512, 512, 1, 1},
		{"one pixel over a tile", encodeJPEGBytes(t, gradient(513, 513)), ImageOptions{}, 513, 513, 2, 5},
		{"1024 square, two levels", encodePNG(t, gradient(1024, 1024)), ImageOptions{}, 1024, 1024, 2, 5},
		{"3000x2000 downscaled to 1000", encodeJPEGBytes(t, gradient(3000, 2000)), ImageOptions{MaxSide: 1000}, 1000, 667, 2, 5},
		{"portrait downscaled", encodePNG(t, gradient(300, 1200)), ImageOptions{MaxSide: 600, TileSize: 256}, 150, 600, 3, 3 + 2 + 1},
		{"small tiles", encodePNG(t, gradient(100, 70)), ImageOptions{TileSize: 16}, 100, 70, 4, 7*5 + 4*3 + 2*2 + 1},
		{"gif", gifOf(gradient(40, 30)), ImageOptions{}, 40, 30, 1, 1},
		{"tiff", tiffOf(gradient(600, 20)), ImageOptions{}, 600, 20, 2, 3},
		{"webp", webpBytes, ImageOptions{TileSize: 64}, 150, 100, 3, 6 + 2 + 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newMemSink(t)
			dir, id := "iiif/finds-12-1", "https://example.org/app/publish/snapshots/3/iiif/finds-12-1"
			got, err := WriteImage(s, dir, id, bytes.NewReader(c.src), c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got.Width != c.wantW || got.Height != c.wantH {
				t.Errorf("published %dx%d, want %dx%d", got.Width, got.Height, c.wantW, c.wantH)
			}
			checkService(t, s, dir, id, got)
			var in struct {
				Tiles []struct {
					ScaleFactors []int `json:"scaleFactors"`
				} `json:"tiles"`
			}
			if err := json.Unmarshal(s.files[dir+"/info.json"], &in); err != nil {
				t.Fatal(err)
			}
			if n := len(in.Tiles[0].ScaleFactors); n != c.wantFactors {
				t.Errorf("%d scale factors %v, want %d", n, in.Tiles[0].ScaleFactors, c.wantFactors)
			}
			tiles := 0
			for _, p := range got.Paths {
				if !strings.HasPrefix(p, dir+"/full/") && !strings.HasSuffix(p, "info.json") {
					tiles++
				}
			}
			if tiles != c.wantTileCounts {
				t.Errorf("%d tiles, want %d", tiles, c.wantTileCounts)
			}
		})
	}
}

// near reports whether two colours are within tol per channel (JPEG is lossy).
func near(c color.Color, r, g, b uint8, tol int) bool {
	cr, cg, cb, _ := c.RGBA()
	d := func(a uint32, b uint8) bool { v := int(a>>8) - int(b); return v <= tol && v >= -tol }
	return d(cr, r) && d(cg, g) && d(cb, b)
}

func TestWriteImagePixels(t *testing.T) {
	// PNG with alpha: transparent left half, half-transparent red right half, flattened on
	// white as the JPEG output has no alpha.
	alpha := image.NewNRGBA(image.Rect(0, 0, 600, 100))
	for y := 0; y < 100; y++ {
		for x := 300; x < 600; x++ {
			alpha.SetNRGBA(x, y, color.NRGBA{255, 0, 0, 128})
		}
	}
	s := newMemSink(t)
	id := "https://example.org/iiif/a"
	got, err := WriteImage(s, "iiif/a", id, bytes.NewReader(encodePNG(t, alpha)), ImageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	full := checkService(t, s, "iiif/a", id, got)
	if c := full.At(100, 50); !near(c, 255, 255, 255, 6) {
		t.Errorf("transparent pixel became %v, want white", c)
	}
	if c := full.At(450, 50); !near(c, 255, 127, 127, 10) {
		t.Errorf("half-transparent red became %v, want pink", c)
	}
	// The second tile at scale 1 starts at x=512: inside the pink half, and its own pixel
	// (0,0) must be the source's (512,0).
	tile, err := jpeg.Decode(bytes.NewReader(s.files["iiif/a/512,0,88,100/88,100/0/default.jpg"]))
	if err != nil {
		t.Fatal(err)
	}
	if c := tile.At(10, 50); !near(c, 255, 127, 127, 10) {
		t.Errorf("tile pixel %v, want pink", c)
	}

	// Tile placement on a gradient: each tile's centre has the colour of the source at the
	// region's centre.
	const w, h = 1100, 700
	src := gradient(w, h)
	s = newMemSink(t)
	got, err = WriteImage(s, "g", "https://example.org/g", bytes.NewReader(encodePNG(t, src)), ImageOptions{Quality: 95})
	if err != nil {
		t.Fatal(err)
	}
	checkService(t, s, "g", "https://example.org/g", got)
	for _, p := range got.Paths {
		var x, y, rw, rh, sw, sh int
		if _, err := fmt.Sscanf(p, "g/%d,%d,%d,%d/%d,%d/0/default.jpg", &x, &y, &rw, &rh, &sw, &sh); err != nil {
			continue
		}
		m, err := jpeg.Decode(bytes.NewReader(s.files[p]))
		if err != nil {
			t.Fatal(err)
		}
		want := src.NRGBAAt(x+rw/2, y+rh/2)
		if c := m.At(sw/2, sh/2); !near(c, want.R, want.G, want.B, 12) {
			t.Errorf("%s centre %v, source %v", p, c, want)
		}
	}
}

// withSOFSize rewrites the dimensions in a baseline JPEG's SOF0 segment.
func withSOFSize(t *testing.T, b []byte, w, h uint16) []byte {
	t.Helper()
	b = bytes.Clone(b)
	i := bytes.Index(b, []byte{0xFF, 0xC0})
	if i < 0 {
		t.Fatal("no SOF0")
	}
	binary.BigEndian.PutUint16(b[i+5:], h)
	binary.BigEndian.PutUint16(b[i+7:], w)
	return b
}

// withIHDRSize rewrites a PNG's declared dimensions and fixes the chunk's CRC, so that only
// the size is a lie.
func withIHDRSize(t *testing.T, b []byte, w, h uint32) []byte {
	t.Helper()
	b = bytes.Clone(b)
	const ihdr = 8 // after the signature: length(4) "IHDR"(4) data(13) crc(4)
	if string(b[ihdr+4:ihdr+8]) != "IHDR" {
		t.Fatal("no IHDR")
	}
	binary.BigEndian.PutUint32(b[ihdr+8:], w)
	binary.BigEndian.PutUint32(b[ihdr+12:], h)
	binary.BigEndian.PutUint32(b[ihdr+21:], crc32.ChecksumIEEE(b[ihdr+4:ihdr+21]))
	return b
}

func TestWriteImageRefuses(t *testing.T) {
	small := encodeJPEGBytes(t, gradient(64, 48))
	smallPNG := encodePNG(t, gradient(64, 48))
	big := encodeJPEGBytes(t, gradient(400, 300))
	bigPNG := encodePNG(t, gradient(400, 300))
	cases := []struct {
		name     string
		src      []byte
		opt      ImageOptions
		tooLarge bool
		is       error
	}{
		{"jpeg bomb 65000x65000", withSOFSize(t, small, 65000, 65000), ImageOptions{}, true, nil},
		{"png bomb 1e6x1e6", withIHDRSize(t, smallPNG, 1_000_000, 1_000_000), ImageOptions{}, true, nil},
		{"png bomb one side over the limit", withIHDRSize(t, smallPNG, 1<<31-1, 1), ImageOptions{}, true, nil},
		{"just over a small limit", small, ImageOptions{MaxPixels: 64*48 - 1}, true, nil},
		{"truncated jpeg", big[:len(big)/2], ImageOptions{}, false, ErrCorruptImage},
		{"jpeg header only", big[:20], ImageOptions{}, false, ErrCorruptImage},
		{"truncated png", bigPNG[:len(bigPNG)/2], ImageOptions{}, false, ErrCorruptImage},
		{"png zero width", withIHDRSize(t, smallPNG, 0, 48), ImageOptions{}, false, ErrCorruptImage},
		{"text", []byte("hello, this is not an image at all"), ImageOptions{}, false, ErrUnsupportedFormat},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`), ImageOptions{}, false, ErrUnsupportedFormat},
		{"empty", nil, ImageOptions{}, false, ErrUnsupportedFormat},
		{"magic only", []byte{0xFF, 0xD8, 0xFF}, ImageOptions{}, false, ErrCorruptImage},
		{"riff not webp", []byte("RIFF\x10\x00\x00\x00WAVEfmt "), ImageOptions{}, false, ErrUnsupportedFormat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newMemSink(t)
			_, err := WriteImage(s, "iiif/x", "https://example.org/iiif/x", bytes.NewReader(c.src), c.opt)
			if err == nil {
				t.Fatal("accepted")
			}
			var tl *TooLargeError
			if got := errors.As(err, &tl); got != c.tooLarge {
				t.Errorf("TooLargeError %v, want %v: %v", got, c.tooLarge, err)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v is not %v", err, c.is)
			}
			if len(s.order) != 0 {
				t.Errorf("refused image wrote %v", s.order)
			}
		})
	}
}

func TestWriteImageArguments(t *testing.T) {
	src := encodePNG(t, gradient(10, 10))
	cases := []struct {
		name, dir, id string
		opt           ImageOptions
	}{
		{"tile too small", "d", "https://e.org/d", ImageOptions{TileSize: 8}},
		{"tile too big", "d", "https://e.org/d", ImageOptions{TileSize: 8192}},
		{"quality", "d", "https://e.org/d", ImageOptions{Quality: 101}},
		{"max side", "d", "https://e.org/d", ImageOptions{MaxSide: -1}},
		{"max pixels", "d", "https://e.org/d", ImageOptions{MaxPixels: -1}},
		{"dir escapes", "../d", "https://e.org/d", ImageOptions{}},
		{"dir absolute", "/d", "https://e.org/d", ImageOptions{}},
		{"dir unclean", "a//d", "https://e.org/d", ImageOptions{}},
		{"dir trailing slash", "d/", "https://e.org/d", ImageOptions{}},
		{"dir dot", ".", "https://e.org/d", ImageOptions{}},
		{"relative id", "d", "/app/d", ImageOptions{}},
		{"ftp id", "d", "ftp://e.org/d", ImageOptions{}},
		{"id trailing slash", "d", "https://e.org/d/", ImageOptions{}},
		{"id with space", "d", "https://e.org/a d", ImageOptions{}},
		{"id with quote", "d", `https://e.org/a"d`, ImageOptions{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newMemSink(t)
			if _, err := WriteImage(s, c.dir, c.id, bytes.NewReader(src), c.opt); err == nil {
				t.Error("accepted")
			}
			if len(s.order) != 0 {
				t.Errorf("wrote %v", s.order)
			}
		})
	}
}

func TestWriteImageSinkError(t *testing.T) {
	src := encodePNG(t, gradient(600, 600))
	for _, n := range []int{1, 2, 5} {
		s := newMemSink(t)
		s.failAt = n
		_, err := WriteImage(s, "d", "https://e.org/d", bytes.NewReader(src), ImageOptions{})
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("Create #%d failing: error %v", n, err)
		}
	}
}

func TestWriteImageDeterministic(t *testing.T) {
	alpha := gradient(1300, 900)
	for i := range alpha.Pix {
		if i%4 == 3 {
			alpha.Pix[i] = uint8(i / 4 % 256)
		}
	}
	srcs := map[string][]byte{
		"jpeg":      encodeJPEGBytes(t, gradient(1300, 900)),
		"png alpha": encodePNG(t, alpha),
	}
	for name, src := range srcs {
		t.Run(name, func(t *testing.T) {
			run := func() *memSink {
				s := newMemSink(t)
				if _, err := WriteImage(s, "d", "https://e.org/d", bytes.NewReader(src), ImageOptions{MaxSide: 1200}); err != nil {
					t.Fatal(err)
				}
				return s
			}
			a, b := run(), run()
			if strings.Join(a.order, ",") != strings.Join(b.order, ",") {
				t.Fatal("file order differs between runs")
			}
			for _, p := range a.order {
				if !bytes.Equal(a.files[p], b.files[p]) {
					t.Errorf("%s differs between runs", p)
				}
			}
		})
	}
}

// oneByteReader hands out a byte at a time, as a slow network stream might; the header
// replay in WriteImage must not depend on how the source is chunked.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func TestWriteImageChunkedSource(t *testing.T) {
	src := encodeJPEGBytes(t, gradient(700, 300))
	a, b := newMemSink(t), newMemSink(t)
	if _, err := WriteImage(a, "d", "https://e.org/d", bytes.NewReader(src), ImageOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteImage(b, "d", "https://e.org/d", oneByteReader{bytes.NewReader(src)}, ImageOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range a.order {
		if !bytes.Equal(a.files[p], b.files[p]) {
			t.Errorf("%s differs when the source arrives a byte at a time", p)
		}
	}
}
