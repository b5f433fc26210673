package iiif

import (
	"encoding/binary"
	"image"
)

// jpegOrientation returns the EXIF orientation (1..8) recorded in a JPEG's APP1 segment
// among the header bytes, or 1. Cameras and phones store pixels as the sensor saw them and
// record the rotation there; Go's decoder ignores it, so a find photographed upright would
// otherwise be published on its side. Every offset is bounds-checked: the bytes are hostile.
func jpegOrientation(b []byte) int {
	for i := 2; i+4 <= len(b) && b[i] == 0xFF; {
		marker := b[i+1]
		if marker == 0xDA || (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
			return 1 // pixels or frame header reached: EXIF comes before them
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return 1
		}
		seg := b[i+4 : i+2+n]
		if marker == 0xE1 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
			return tiffOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(t[2:]) != 42 {
		return 1
	}
	ifd := int64(bo.Uint32(t[4:]))
	if ifd+2 > int64(len(t)) {
		return 1
	}
	count := int64(bo.Uint16(t[ifd:]))
	for k := int64(0); k < count; k++ {
		e := ifd + 2 + 12*k
		if e+12 > int64(len(t)) {
			return 1
		}
		const tagOrientation, typeShort = 0x0112, 3
		if bo.Uint16(t[e:]) == tagOrientation && bo.Uint16(t[e+2:]) == typeShort {
			if v := int(bo.Uint16(t[e+8:])); v >= 1 && v <= 8 {
				return v
			}
			return 1
		}
	}
	return 1
}

// orient returns m turned as EXIF orientation o says it should be displayed.
func orient(m *image.RGBA, o int) *image.RGBA {
	if o <= 1 || o > 8 {
		return m
	}
	w, h := m.Bounds().Dx(), m.Bounds().Dy()
	ow, oh := w, h
	if o >= 5 { // the orientations that swap width and height
		ow, oh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, ow, oh))
	for y := 0; y < oh; y++ {
		for x := 0; x < ow; x++ {
			var sx, sy int
			switch o {
			case 2: // mirrored horizontally
				sx, sy = w-1-x, y
			case 3: // turned 180°
				sx, sy = w-1-x, h-1-y
			case 4: // mirrored vertically
				sx, sy = x, h-1-y
			case 5: // mirrored along the main diagonal
				sx, sy = y, x
			case 6: // needs turning 90° clockwise
				sx, sy = y, h-1-x
			case 7: // mirrored along the other diagonal
				sx, sy = w-1-y, h-1-x
			case 8: // needs turning 90° anticlockwise
				sx, sy = w-1-y, x
			}
			copy(out.Pix[out.PixOffset(x, y):][:4], m.Pix[m.PixOffset(sx, sy):][:4])
		}
	}
	return out
}
