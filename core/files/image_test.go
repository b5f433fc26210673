package files

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"image"
	"testing"
)

// TestOrientRGBA checks the eight EXIF orientations on a 3×2 image whose
// pixels are numbered 1–6 row by row: each must come out upright.
func TestOrientRGBA(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 3, 2))
	for i := range 6 {
		src.Pix[i*4] = byte(i + 1)
	}
	// Rows of the upright image, as the stored image is for orientation o.
	cases := []struct {
		o    int
		want [][]byte
	}{
		{1, [][]byte{{1, 2, 3}, {4, 5, 6}}},
		{2, [][]byte{{3, 2, 1}, {6, 5, 4}}},
		{3, [][]byte{{6, 5, 4}, {3, 2, 1}}},
		{4, [][]byte{{4, 5, 6}, {1, 2, 3}}},
		{5, [][]byte{{1, 4}, {2, 5}, {3, 6}}},
		{6, [][]byte{{4, 1}, {5, 2}, {6, 3}}},
		{7, [][]byte{{6, 3}, {5, 2}, {4, 1}}},
		{8, [][]byte{{3, 6}, {2, 5}, {1, 4}}},
	}
	for _, c := range cases {
		got := orientRGBA(src, c.o)
		if got.Rect.Dy() != len(c.want) || got.Rect.Dx() != len(c.want[0]) {
			t.Fatalf("orientation %d: %v", c.o, got.Rect)
		}
		for y, row := range c.want {
			for x, v := range row {
				if p := got.Pix[got.PixOffset(x, y)]; p != v {
					t.Errorf("orientation %d: (%d,%d) = %d, want %d", c.o, x, y, p, v)
				}
			}
		}
	}
}

func exifSegment(order string, o uint16) []byte {
	var bo interface {
		binary.ByteOrder
		binary.AppendByteOrder
	} = binary.BigEndian
	hdr := "MM\x00*"
	if order == "II" {
		bo, hdr = binary.LittleEndian, "II*\x00"
	}
	tiff := append([]byte(hdr), 0, 0, 0, 0)
	bo.PutUint32(tiff[4:], 8)
	tiff = bo.AppendUint16(tiff, 2)
	tiff = bo.AppendUint16(tiff, 0x010F) // Make, skipped
	tiff = bo.AppendUint16(tiff, 2)
	tiff = bo.AppendUint32(tiff, 0)
	tiff = bo.AppendUint32(tiff, 0)
	tiff = bo.AppendUint16(tiff, 0x0112)
	tiff = bo.AppendUint16(tiff, 3)
	tiff = bo.AppendUint32(tiff, 1)
	tiff = bo.AppendUint16(tiff, o)
	tiff = append(tiff, 0, 0, 0, 0, 0, 0)
	p := append([]byte("Exif\x00\x00"), tiff...)
	seg := []byte{0xFF, 0xE1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(p)+2))
	return append(seg, p...)
}

func TestJPEGOrientation(t *testing.T) {
	app0 := []byte{0xFF, 0xE0, 0x00, 0x07, 'J', 'F', 'I', 'F', 0}
	sos := []byte{0xFF, 0xDA, 0x00, 0x02}
	cat := func(parts ...[]byte) []byte { return bytes.Join(append([][]byte{{0xFF, 0xD8}}, parts...), nil) }
	for _, c := range []struct {
		name string
		in   []byte
		want int
	}{
		{"big-endian 6", cat(app0, exifSegment("MM", 6), sos), 6},
		{"little-endian 8", cat(exifSegment("II", 8), sos), 8},
		{"none", cat(app0, sos), 1},
		{"after the scan", cat(sos, exifSegment("MM", 3)), 1},
		{"out of range", cat(exifSegment("MM", 9), sos), 1},
		{"truncated", cat(exifSegment("MM", 6)[:12]), 1},
		{"not a JPEG", []byte("\x89PNG\r\n"), 1},
		{"empty", nil, 1},
	} {
		if got := jpegOrientation(bufio.NewReader(bytes.NewReader(c.in))); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestScaleUprightKeepsAspect(t *testing.T) {
	for _, c := range []struct {
		w, h, side, orient int
		ww, wh             int
	}{
		{6000, 4000, 1000, 1, 1000, 667},
		{6000, 4000, 1000, 6, 667, 1000},
		{4000, 6000, 256, 1, 171, 256},
		{100, 50, 256, 1, 100, 50}, // never enlarged
		{5000, 1, 100, 1, 100, 1},
	} {
		got := scaleUpright(image.NewRGBA(image.Rect(0, 0, c.w, c.h)), c.side, c.orient, false)
		if got.Rect.Dx() != c.ww || got.Rect.Dy() != c.wh {
			t.Errorf("%dx%d to %d (orientation %d): %v, want %dx%d", c.w, c.h, c.side, c.orient, got.Rect, c.ww, c.wh)
		}
	}
}
