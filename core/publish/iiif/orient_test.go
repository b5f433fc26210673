package iiif

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"testing"
)

// withExifOrientation inserts an APP1 Exif segment holding one IFD entry, Orientation, right
// after a JPEG's SOI marker, in the given byte order.
func withExifOrientation(jpg []byte, o uint16, bo binary.ByteOrder) []byte {
	var t bytes.Buffer
	if bo == binary.BigEndian {
		t.WriteString("MM")
	} else {
		t.WriteString("II")
	}
	w := func(v any) { binary.Write(&t, bo, v) }
	w(uint16(42))
	w(uint32(8))      // first IFD right after the header
	w(uint16(1))      // one entry
	w(uint16(0x0112)) // Orientation
	w(uint16(3))      // SHORT
	w(uint32(1))      // count
	w(o)
	w(uint16(0)) // padding of the 4-byte value field
	w(uint32(0)) // no next IFD
	payload := append([]byte("Exif\x00\x00"), t.Bytes()...)
	seg := []byte{0xFF, 0xE1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(2+len(payload)))
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	out = append(out, payload...)
	return append(out, jpg[2:]...)
}

func TestWriteImageExifOrientation(t *testing.T) {
	// Stored quadrants: red top-left, blue top-right, green bottom-left, black bottom-right.
	const w, h = 80, 40
	src := image.NewNRGBA(image.Rect(0, 0, w, h))
	quad := map[string]color.NRGBA{"R": {255, 0, 0, 255}, "B": {0, 0, 255, 255}, "G": {0, 255, 0, 255}, "K": {0, 0, 0, 255}}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			k := [2][2]string{{"R", "B"}, {"G", "K"}}[y*2/h][x*2/w]
			src.SetNRGBA(x, y, quad[k])
		}
	}
	jpg := encodeJPEGBytes(t, src)
	// Displayed quadrants TL, TR, BL, BR for each orientation (worked out by hand from the
	// EXIF definitions, not from the code under test).
	cases := []struct {
		o      uint16
		layout [4]string
		swap   bool
	}{
		{1, [4]string{"R", "B", "G", "K"}, false},
		{2, [4]string{"B", "R", "K", "G"}, false},
		{3, [4]string{"K", "G", "B", "R"}, false},
		{4, [4]string{"G", "K", "R", "B"}, false},
		{5, [4]string{"R", "G", "B", "K"}, true},
		{6, [4]string{"G", "R", "K", "B"}, true},
		{7, [4]string{"K", "B", "G", "R"}, true},
		{8, [4]string{"B", "K", "R", "G"}, true},
		{9, [4]string{"R", "B", "G", "K"}, false}, // out of range: ignored
		{0, [4]string{"R", "B", "G", "K"}, false},
	}
	for _, c := range cases {
		for _, bo := range []binary.ByteOrder{binary.BigEndian, binary.LittleEndian} {
			s := newMemSink(t)
			got, err := WriteImage(s, "d", "https://e.org/d", bytes.NewReader(withExifOrientation(jpg, c.o, bo)), ImageOptions{TileSize: 16})
			if err != nil {
				t.Fatalf("orientation %d: %v", c.o, err)
			}
			full := checkService(t, s, "d", "https://e.org/d", got)
			ow, oh := w, h
			if c.swap {
				ow, oh = h, w
			}
			if got.Width != ow || got.Height != oh {
				t.Errorf("orientation %d %v: %dx%d, want %dx%d", c.o, bo, got.Width, got.Height, ow, oh)
				continue
			}
			at := [4]image.Point{{ow / 4, oh / 4}, {3 * ow / 4, oh / 4}, {ow / 4, 3 * oh / 4}, {3 * ow / 4, 3 * oh / 4}}
			for i, p := range at {
				want := quad[c.layout[i]]
				if px := full.At(p.X, p.Y); !near(px, want.R, want.G, want.B, 40) {
					t.Errorf("orientation %d %v: quadrant %d is %v, want %s", c.o, bo, i, px, c.layout[i])
				}
			}
		}
	}
}

func TestJPEGOrientationHostile(t *testing.T) {
	// Damaged or truncated EXIF must give 1 and never panic.
	good := withExifOrientation([]byte{0xFF, 0xD8, 0xFF, 0xD9}, 6, binary.BigEndian)
	if o := jpegOrientation(good); o != 6 {
		t.Fatalf("intact segment: %d", o)
	}
	for n := 0; n < len(good); n++ {
		if o := jpegOrientation(good[:n]); o != 1 && o != 6 {
			t.Errorf("truncated to %d: %d", n, o)
		}
	}
	for i := 2; i < len(good)-2; i++ {
		for _, v := range []byte{0x00, 0xFF, 0x7F} {
			b := bytes.Clone(good)
			b[i] = v
			if o := jpegOrientation(b); o < 1 || o > 8 {
				t.Errorf("byte %d = %#x: %d", i, v, o)
			}
		}
	}
}
