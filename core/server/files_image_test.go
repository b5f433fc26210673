package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"sync"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

var (
	red  = color.RGBA{R: 255, A: 255}
	gray = color.RGBA{R: 128, G: 128, B: 128, A: 255}
)

// markedImage is a gray w×h image with a red block over its top-left
// tenth.
func markedImage(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := gray
			if x < w/10 && y < h/10 {
				c = red
			}
			m.SetRGBA(x, y, c)
		}
	}
	return m
}

func encodeJPEG(t testing.TB, m image.Image) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodePNG(t testing.TB, m image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withOrientation splices an APP1 EXIF segment carrying the orientation
// tag (big-endian TIFF, one IFD0 entry) right after a JPEG's SOI.
func withOrientation(j []byte, o uint16) []byte {
	tiff := []byte("MM\x00*\x00\x00\x00\x08")
	tiff = binary.BigEndian.AppendUint16(tiff, 1)      // one entry
	tiff = binary.BigEndian.AppendUint16(tiff, 0x0112) // Orientation
	tiff = binary.BigEndian.AppendUint16(tiff, 3)      // SHORT
	tiff = binary.BigEndian.AppendUint32(tiff, 1)      // count
	tiff = binary.BigEndian.AppendUint16(tiff, o)
	tiff = append(tiff, 0, 0, 0, 0, 0, 0) // padding, no next IFD
	payload := append([]byte("Exif\x00\x00"), tiff...)
	seg := []byte{0xFF, 0xE1}
	seg = binary.BigEndian.AppendUint16(seg, uint16(len(payload)+2))
	seg = append(seg, payload...)
	out := append([]byte{}, j[:2]...)
	out = append(out, seg...)
	return append(out, j[2:]...)
}

// pngHeaderOnly is a PNG declaring w×h pixels whose data is missing: only
// its header can be read.
func pngHeaderOnly(w, h uint32) []byte {
	ihdr := []byte("IHDR")
	ihdr = binary.BigEndian.AppendUint32(ihdr, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	out := []byte("\x89PNG\r\n\x1a\n")
	out = binary.BigEndian.AppendUint32(out, 13)
	out = append(out, ihdr...)
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(ihdr))
	return append(out, make([]byte, 64)...)
}

func near(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	d := func(a uint32, b uint8) bool { x := int(a>>8) - int(b); return x > -40 && x < 40 }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

var bigPhoto = sync.OnceValue(func() []byte {
	return withOrientation(encodeJPEG(&testing.B{}, markedImage(6000, 4000)), 6)
})

func TestFileImages(t *testing.T) {
	photo := bigPhoto()
	smallJPEG := encodeJPEG(t, markedImage(800, 600))
	widePNG := encodePNG(t, markedImage(3000, 1500))
	var gifBuf bytes.Buffer
	pal := image.NewPaletted(image.Rect(0, 0, 1200, 800), color.Palette{gray, red})
	for i := range pal.Pix {
		pal.Pix[i] = 0
	}
	if err := gif.Encode(&gifBuf, pal, nil); err != nil {
		t.Fatal(err)
	}
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="5000" height="5000"><rect width="5000" height="5000"/></svg>`)
	pdf := []byte("%PDF-1.7\nbody")

	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		f.must(t, 200, f.super, "PUT", "/dig/api/config/app", `{"maxImageSize":1000}`)
		site := f.create(t, f.writer, "sites", `{"name":"Pompeii"}`)

		type want struct {
			w, h     int
			mime     string
			ext      string
			same     bool // stored byte for byte
			thumb    bool
			redAt    image.Point // a pixel of the marker after orientation
			grayAt   image.Point
			noEXIF   bool
			thumbMax int
		}
		cases := []struct {
			name    string
			content []byte
			want    want
		}{
			{"photo.jpg", photo, want{w: 667, h: 1000, mime: "image/jpeg", ext: "jpg", thumb: true,
				redAt: image.Pt(667-20, 30), grayAt: image.Pt(20, 30), noEXIF: true}},
			{"plan.png", widePNG, want{w: 1000, h: 500, mime: "image/png", ext: "png", thumb: true, redAt: image.Pt(20, 20), grayAt: image.Pt(980, 480)}},
			{"small.jpeg", smallJPEG, want{w: 800, h: 600, mime: "image/jpeg", ext: "jpeg", same: true, thumb: true}},
			{"anim.gif", gifBuf.Bytes(), want{w: 1000, h: 667, mime: "image/png", ext: "png", thumb: true}},
			{"drawing.svg", svg, want{mime: "image/svg+xml", ext: "svg", same: true}},
			{"report.pdf", pdf, want{mime: "application/pdf", ext: "pdf", same: true}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				id, _ := f.uploadOK(t, f.writer, "sites", site, c.name, c.content)
				var entry map[string]any
				for _, x := range f.recordFiles(t, f.reader, "sites", site) {
					if m := x.(map[string]any); m["id"] == float64(id) {
						entry = m
					}
				}
				if entry == nil || entry["ext"] != c.want.ext || entry["mime"] != c.want.mime {
					t.Fatalf("entry: %v", entry)
				}
				rec := f.send(t, f.reader, "GET", fmt.Sprintf("/dig/api/file/%d/download", id), nil, nil)
				body := rec.Body.Bytes()
				if rec.Code != 200 || entry["sha256"] != sum(body) || entry["size"] != float64(len(body)) || rec.Header().Get("Content-Type") != c.want.mime {
					t.Fatalf("download: %d %v, entry %v", rec.Code, rec.Header(), entry)
				}
				if c.want.same != bytes.Equal(body, c.content) {
					t.Fatalf("stored bytes: same=%v, want %v", !c.want.same, c.want.same)
				}
				if c.want.noEXIF && bytes.Contains(body, []byte("Exif\x00\x00")) {
					t.Fatal("the orientation tag is still stored")
				}
				if c.want.w > 0 {
					m, _, err := image.Decode(bytes.NewReader(body))
					if err != nil {
						t.Fatal(err)
					}
					if b := m.Bounds(); b.Dx() != c.want.w || b.Dy() != c.want.h {
						t.Fatalf("stored %v, want %dx%d", b, c.want.w, c.want.h)
					}
					if c.want.redAt != (image.Point{}) && (!near(m.At(c.want.redAt.X, c.want.redAt.Y), red) || !near(m.At(c.want.grayAt.X, c.want.grayAt.Y), gray)) {
						t.Fatalf("marker: at %v %v, at %v %v", c.want.redAt, m.At(c.want.redAt.X, c.want.redAt.Y), c.want.grayAt, m.At(c.want.grayAt.X, c.want.grayAt.Y))
					}
				}
				thumbURL := fmt.Sprintf("/dig/api/file/%d/thumb", id)
				rec = f.send(t, f.reader, "GET", thumbURL, nil, nil)
				if !c.want.thumb {
					if rec.Code != 404 || !bytes.Contains(rec.Body.Bytes(), []byte(`"code":"no_thumbnail"`)) || entry["thumb_url"] != nil {
						t.Fatalf("thumb: %d %s, thumb_url %v", rec.Code, rec.Body.String(), entry["thumb_url"])
					}
					return
				}
				if u, _ := entry["thumb_url"].(string); !strings.HasPrefix(u, thumbURL+"?t=") || rec.Code != 200 || rec.Header().Get("Content-Type") != "image/jpeg" ||
					rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("ETag") == "" {
					t.Fatalf("thumb: %d %v, thumb_url %v", rec.Code, rec.Header(), entry["thumb_url"])
				}
				cfg, err := jpeg.DecodeConfig(bytes.NewReader(rec.Body.Bytes()))
				if err != nil || max(cfg.Width, cfg.Height) != 256 || (c.want.w > c.want.h) != (cfg.Width > cfg.Height) {
					t.Fatalf("thumb %dx%d %v, image %dx%d", cfg.Width, cfg.Height, err, c.want.w, c.want.h)
				}
				if rec = f.send(t, "", "GET", thumbURL, nil, nil); rec.Code == 200 {
					t.Fatalf("thumb without a token: %d", rec.Code)
				}
			})
		}

		t.Run("too many pixels", func(t *testing.T) {
			before := len(f.blobs(t))
			code, m := f.upload(t, f.writer, fmt.Sprintf("/dig/api/record/sites/%d/file", site), "file", "bomb.png", pngHeaderOnly(20000, 20000))
			if code != 400 || m["code"] != "image_too_large" {
				t.Fatalf("bomb: %d %v", code, m)
			}
			if after := len(f.blobs(t)); after != before {
				t.Fatalf("blobs %d → %d", before, after)
			}
		})

		t.Run("replace", func(t *testing.T) {
			id, _ := f.uploadOK(t, f.writer, "sites", site, "tiny.jpg", smallJPEG)
			before := len(f.blobs(t))
			code, m := f.upload(t, f.writer, fmt.Sprintf("/dig/api/file/%d/replace", id), "file", "rotated.jpg", photo)
			file, _ := m["file"].(map[string]any)
			if code != 200 || file["thumb_url"] == nil {
				t.Fatalf("replace: %d %v", code, m)
			}
			rec := f.send(t, f.reader, "GET", fmt.Sprintf("/dig/api/file/%d/download", id), nil, nil)
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(rec.Body.Bytes()))
			if err != nil || cfg.Width != 667 || cfg.Height != 1000 || file["sha256"] != sum(rec.Body.Bytes()) {
				t.Fatalf("replaced: %dx%d %v", cfg.Width, cfg.Height, err)
			}
			if after := len(f.blobs(t)); after != before {
				t.Fatalf("blobs %d → %d (old blob and thumbnail must go)", before, after)
			}
			code, m = f.upload(t, f.writer, fmt.Sprintf("/dig/api/file/%d/replace", id), "file", "bomb.png", pngHeaderOnly(20000, 20000))
			if code != 400 || m["code"] != "image_too_large" || len(f.blobs(t)) != before {
				t.Fatalf("replace with a bomb: %d %v", code, m)
			}
			// Replaced by a document: no thumbnail any more.
			code, m = f.upload(t, f.writer, fmt.Sprintf("/dig/api/file/%d/replace", id), "file", "notes.pdf", pdf)
			if file, _ = m["file"].(map[string]any); code != 200 || file["thumb_url"] != nil || len(f.blobs(t)) != before-1 {
				t.Fatalf("replace by a PDF: %d %v, blobs %d", code, m, len(f.blobs(t)))
			}
			rec = f.send(t, f.reader, "GET", fmt.Sprintf("/dig/api/file/%d/thumb", id), nil, nil)
			if rec.Code != 404 {
				t.Fatalf("thumb after replace by a PDF: %d", rec.Code)
			}
		})

		t.Run("delete removes the thumbnail", func(t *testing.T) {
			id, _ := f.uploadOK(t, f.writer, "sites", site, "gone.png", widePNG)
			before := len(f.blobs(t))
			f.must(t, 200, f.writer, "DELETE", fmt.Sprintf("/dig/api/file/%d", id), "")
			if after := len(f.blobs(t)); after != before-2 {
				t.Fatalf("blobs %d → %d", before, after)
			}
		})
	})
}

func TestFileImagesWithoutMaxSize(t *testing.T) {
	photo := bigPhoto()
	f := newDig(t, store.SQLite)
	site := f.create(t, f.writer, "sites", `{"name":"Pompeii"}`)
	id, _ := f.uploadOK(t, f.writer, "sites", site, "photo.jpg", photo)
	rec := f.send(t, f.reader, "GET", fmt.Sprintf("/dig/api/file/%d/download", id), nil, nil)
	if !bytes.Equal(rec.Body.Bytes(), photo) {
		t.Fatal("without maxImageSize an image is stored as it came")
	}
	rec = f.send(t, f.reader, "GET", fmt.Sprintf("/dig/api/file/%d/thumb", id), nil, nil)
	m, err := jpeg.Decode(bytes.NewReader(rec.Body.Bytes()))
	if err != nil || m.Bounds().Dx() != 171 || m.Bounds().Dy() != 256 {
		t.Fatalf("thumb %v %v", err, m)
	}
	if !near(m.At(171-5, 5), red) || !near(m.At(5, 5), gray) {
		t.Fatal("the thumbnail is not upright")
	}
}

// pngHeader is pngHeaderOnly with the PNG's bit depth and color type
// (0 gray, 2 RGB, 6 RGBA): what the decoder would make of its pixels.
func pngHeader(w, h uint32, depth, colorType byte) []byte {
	out := pngHeaderOnly(w, h)
	// The IHDR's bit depth and color type follow its width and height.
	out[24], out[25] = depth, colorType
	crc := crc32.ChecksumIEEE(out[12:29])
	binary.BigEndian.PutUint32(out[29:33], crc)
	return out
}

// TestImageDecodeBudget: an image is decoded only when its pixels fit in
// memory as decoded, counted in bytes from its header's color model, not
// only in pixels: two 760 KB PNGs of 9999×10000 16-bit pixels (800 MB each
// once decoded, under the 100-megapixel cap) took a writer's uploads to
// 1.8 GB. Those are refused (400 image_too_large, with decoded_bytes)
// before any decoding and leave nothing stored; images of as many pixels
// that decode to at most 400 MB (8-bit RGBA, 16-bit gray) are taken as
// before (header-only, they are kept as they came).
func TestImageDecodeBudget(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		f := newDig(t, e)
		site := f.create(t, f.writer, "sites", `{"name":"Pompeii"}`)
		url := fmt.Sprintf("/dig/api/record/sites/%d/file", site)
		for _, c := range []struct {
			name         string
			png          []byte
			status       int
			decodedBytes float64 // of a refusal
		}{
			{"16-bit RGBA 9999×10000: 800 MB", pngHeader(9999, 10000, 16, 6), 400, 9999 * 10000 * 8},
			{"16-bit RGB 7100×7100: 403 MB", pngHeader(7100, 7100, 16, 2), 400, 7100 * 7100 * 8},
			{"16-bit RGB 7000×7000: 392 MB", pngHeader(7000, 7000, 16, 2), 200, 0},
			{"16-bit gray 9999×10000: 200 MB", pngHeader(9999, 10000, 16, 0), 200, 0},
			{"8-bit RGBA 9999×10000: 400 MB", pngHeader(9999, 10000, 8, 6), 200, 0},
			{"8-bit gray 10001×10000: over the pixel cap", pngHeader(10001, 10000, 8, 0), 400, 10001 * 10000},
		} {
			t.Run(c.name, func(t *testing.T) {
				before := len(f.blobs(t))
				code, m := f.upload(t, f.writer, url, "file", "big.png", c.png)
				if code != c.status {
					t.Fatalf("%d %v", code, m)
				}
				if code == 200 {
					return
				}
				if m["code"] != "image_too_large" || m["decoded_bytes"] != c.decodedBytes || m["max_decoded_bytes"] != float64(400_000_000) {
					t.Fatalf("refusal: %v", m)
				}
				if after := len(f.blobs(t)); after != before {
					t.Fatalf("blobs %d → %d after a refusal", before, after)
				}
			})
		}
	})
}
