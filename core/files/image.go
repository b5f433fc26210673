package files

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // GIF decoding (first frame)
	"image/jpeg"
	"image/png"
	"io"

	_ "golang.org/x/image/bmp"  // BMP decoding
	"golang.org/x/image/draw"   // scaling
	_ "golang.org/x/image/webp" // WebP decoding

	"github.com/strata-archaeo/strata/core/errs"
)

// Image handling. Raster images (JPEG, PNG, GIF, WebP, BMP) are checked
// on upload and replace:
//
//   - an image declaring more than MaxPixels pixels, or whose decoded
//     pixels would take more than MaxPixels×4 bytes (DecodedBytes: a
//     16-bit PNG takes 8 bytes a pixel, twice an 8-bit RGBA one), is
//     refused (400 image_too_large) from its header alone, before anything
//     is decoded, so a decompression bomb cannot exhaust memory;
//   - when the app's maxImageSize is set and the image's longest side is
//     longer, it is scaled to it (aspect ratio kept, Catmull-Rom), turned
//     upright by its EXIF orientation and stored instead of the original:
//     JPEG as JPEG (quality 90, no EXIF), everything else as PNG (lossless,
//     keeps transparency; a GIF keeps its first frame only), the name's
//     extension following the format;
//   - every image gets a thumbnail (ThumbSize on its long side, upright,
//     JPEG on white), stored as its own blob.
//
// An image that fits is stored byte for byte as it came. Content that is
// sniffed as an image but does not decode is kept as it is, without a
// thumbnail. Vector images (SVG) and documents are never touched.

const (
	// DefaultMaxPixels caps the pixels of an image that is decoded.
	DefaultMaxPixels = 100_000_000
	// ThumbSize is the longest side of a thumbnail, in pixels.
	ThumbSize    = 256
	jpegQuality  = 90
	thumbQuality = 80
)

// ErrImageTooLarge refuses an image whose declared size would take too
// much memory to decode.
var ErrImageTooLarge = errs.New(errs.Invalid, "image_too_large", "the image has too many pixels, or pixels too deep, to be processed")

// decodable are the sniffed types this package decodes.
var decodable = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true, "image/bmp": true}

// imageSlots bounds how many images are decoded at once (each may hold
// hundreds of megabytes of pixels).
var imageSlots = make(chan struct{}, 2)

func (s *Service) maxPixels() int64 {
	if s.MaxPixels > 0 {
		return s.MaxPixels
	}
	return DefaultMaxPixels
}

// processImage applies the image rules to the blob put has just stored
// for f: it may replace f's blob by a downscaled one (dropping the
// original) and sets f.ThumbKey. On error the caller drops f's blobs.
func (s *Service) processImage(ctx context.Context, app string, f *File, maxSide int) error {
	if !decodable[f.Mime] {
		return nil
	}
	b, err := s.Storage.Get(ctx, app, f.BlobKey)
	if err != nil {
		return fmt.Errorf("open image: %w", err)
	}
	defer b.Close()
	cfg, format, err := image.DecodeConfig(bufio.NewReader(b))
	if err != nil {
		return nil // not an image we can read: kept as it is
	}
	if err := CheckDecodable(cfg, s.maxPixels()); err != nil {
		return err
	}
	orient := 1
	if format == "jpeg" {
		if _, err := b.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("read image: %w", err)
		}
		orient = jpegOrientation(bufio.NewReader(b))
	}
	if _, err := b.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("read image: %w", err)
	}
	select {
	case imageSlots <- struct{}{}:
		defer func() { <-imageSlots }()
	case <-ctx.Done():
		return ctx.Err()
	}
	img, _, err := image.Decode(bufio.NewReader(b))
	if err != nil {
		return nil // truncated or broken: kept as it is, no thumbnail
	}
	_ = b.Close()
	if maxSide > 0 && max(cfg.Width, cfg.Height) > maxSide {
		img = scaleUpright(img, maxSide, orient, false)
		orient = 1
		enc, mime, ext := encodePNG, "image/png", "png"
		if format == "jpeg" {
			enc, mime, ext = encodeJPEG(jpegQuality), "image/jpeg", f.Ext
			if ext != "jpg" && ext != "jpeg" && ext != "jpe" {
				ext = "jpg"
			}
		}
		key, n, sum, err := s.putEncoded(ctx, app, img, enc)
		if err != nil {
			return err
		}
		old := f.BlobKey
		f.BlobKey, f.Size, f.SHA256, f.Mime, f.Ext = key, n, sum, mime, ext
		s.dropBlob(app, old)
	}
	thumb := scaleUpright(img, ThumbSize, orient, true)
	img = nil
	key, _, _, err := s.putEncoded(ctx, app, thumb, encodeJPEG(thumbQuality))
	if err != nil {
		return err
	}
	f.ThumbKey = key
	return nil
}

// DecodedBytes is the memory the decoded pixels of an image with header
// cfg take, from its color model: the image types the standard decoders
// return (RGBA64 for 16-bit PNG, YCbCr for JPEG, with at most 3 bytes a
// pixel when the chroma is not subsampled, Paletted for GIF and 8-bit
// palettes). An unknown model counts 8 bytes a pixel, the most any takes.
func DecodedBytes(cfg image.Config) int64 {
	var per int64
	switch cfg.ColorModel {
	case color.GrayModel, color.AlphaModel:
		per = 1
	case color.Gray16Model, color.Alpha16Model:
		per = 2
	case color.YCbCrModel:
		per = 3
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel, color.NYCbCrAModel:
		per = 4
	default:
		if _, ok := cfg.ColorModel.(color.Palette); ok {
			per = 1
		} else {
			per = 8 // RGBA64, NRGBA64, or a model not listed
		}
	}
	return int64(cfg.Width) * int64(cfg.Height) * per
}

// CheckDecodable refuses (ErrImageTooLarge) to decode an image whose
// header cfg declares more than maxPixels pixels, or pixels that would
// take more than maxPixels×4 bytes once decoded (an 8-bit RGBA image at
// the pixel cap). Counting pixels alone let a 760 KB PNG of 9999×10000
// 16-bit pixels through: 800 MB once decoded, for each of the images
// decoded at once.
func CheckDecodable(cfg image.Config, maxPixels int64) error {
	px, n := int64(cfg.Width)*int64(cfg.Height), DecodedBytes(cfg)
	if px > maxPixels || n > 4*maxPixels {
		return ErrImageTooLarge.With("width", cfg.Width).With("height", cfg.Height).With("max_pixels", maxPixels).
			With("decoded_bytes", n).With("max_decoded_bytes", 4*maxPixels)
	}
	return nil
}

type encoder func(io.Writer, image.Image) error

func encodePNG(w io.Writer, m image.Image) error { return png.Encode(w, m) }

func encodeJPEG(q int) encoder {
	return func(w io.Writer, m image.Image) error { return jpeg.Encode(w, m, &jpeg.Options{Quality: q}) }
}

// putEncoded streams an encoded image to storage (no whole copy of the
// encoded bytes is held) and returns its key, size and SHA-256.
func (s *Service) putEncoded(ctx context.Context, app string, m image.Image, enc encoder) (string, int64, string, error) {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 64<<10)
		err := enc(bw, m)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	h := sha256.New()
	key, n, err := s.Storage.Put(ctx, app, io.TeeReader(pr, h))
	pr.Close() // ends the encoder if Put stopped reading early
	if err != nil {
		return "", 0, "", fmt.Errorf("store image: %w", err)
	}
	return key, n, hex.EncodeToString(h.Sum(nil)), nil
}

// scaleUpright scales m so that its longest side is at most side pixels
// (never enlarging) and then applies the EXIF orientation; flatten draws
// it on white (for JPEG thumbnails of transparent images).
func scaleUpright(m image.Image, side, orient int, flatten bool) *image.RGBA {
	sb := m.Bounds()
	w, h := sb.Dx(), sb.Dy()
	tw, th := w, h
	if max(w, h) > side {
		if w >= h {
			tw, th = side, max(1, int((int64(h)*int64(side)+int64(w)/2)/int64(w)))
		} else {
			tw, th = max(1, int((int64(w)*int64(side)+int64(h)/2)/int64(h))), side
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	op := draw.Src
	if flatten {
		draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
		op = draw.Over
	}
	if tw == w && th == h {
		draw.Draw(dst, dst.Bounds(), m, sb.Min, op)
	} else {
		draw.CatmullRom.Scale(dst, dst.Bounds(), m, sb, op, nil)
	}
	return orientRGBA(dst, orient)
}

// orientRGBA turns an image stored with EXIF orientation o upright.
func orientRGBA(src *image.RGBA, o int) *image.RGBA {
	if o < 2 || o > 8 {
		return src
	}
	w, h := src.Rect.Dx(), src.Rect.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < dh; y++ {
		for x := 0; x < dw; x++ {
			var sx, sy int
			switch o {
			case 2: // mirrored
				sx, sy = w-1-x, y
			case 3: // rotated 180°
				sx, sy = w-1-x, h-1-y
			case 4: // mirrored vertically
				sx, sy = x, h-1-y
			case 5: // transposed
				sx, sy = y, x
			case 6: // to be turned 90° clockwise
				sx, sy = y, h-1-x
			case 7: // transversed
				sx, sy = w-1-y, h-1-x
			case 8: // to be turned 90° counter-clockwise
				sx, sy = w-1-y, x
			}
			si, di := src.PixOffset(sx, sy), dst.PixOffset(x, y)
			copy(dst.Pix[di:di+4], src.Pix[si:si+4])
		}
	}
	return dst
}

// jpegOrientation reads the EXIF orientation (1–8) of a JPEG from its
// APP1 segment; 1 when there is none or it cannot be read. Only the
// segments before the image data are read, each at most 64 KiB.
func jpegOrientation(r *bufio.Reader) int {
	var soi [2]byte
	if _, err := io.ReadFull(r, soi[:]); err != nil || soi != [2]byte{0xFF, 0xD8} {
		return 1
	}
	for range 64 { // a JPEG has few segments before its scan
		var m [4]byte
		if _, err := io.ReadFull(r, m[:2]); err != nil || m[0] != 0xFF {
			return 1
		}
		for m[1] == 0xFF { // fill bytes
			b, err := r.ReadByte()
			if err != nil {
				return 1
			}
			m[1] = b
		}
		if m[1] == 0xD9 || m[1] == 0xDA { // end of image, start of scan
			return 1
		}
		if m[1] == 0x01 || (m[1] >= 0xD0 && m[1] <= 0xD7) { // no length
			continue
		}
		if _, err := io.ReadFull(r, m[2:4]); err != nil {
			return 1
		}
		n := int(m[2])<<8 | int(m[3]) - 2
		if n < 0 {
			return 1
		}
		if m[1] != 0xE1 {
			if _, err := r.Discard(n); err != nil {
				return 1
			}
			continue
		}
		seg := make([]byte, n)
		if _, err := io.ReadFull(r, seg); err != nil {
			return 1
		}
		if o, ok := exifOrientation(seg); ok {
			return o
		}
	}
	return 1
}

// exifOrientation finds tag 0x0112 in IFD0 of an APP1 "Exif" payload.
func exifOrientation(seg []byte) (int, bool) {
	if len(seg) < 14 || string(seg[:6]) != "Exif\x00\x00" {
		return 0, false
	}
	t := seg[6:]
	var u16 func([]byte) uint16
	var u32 func([]byte) uint32
	switch string(t[:4]) {
	case "II*\x00":
		u16 = func(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
		u32 = func(b []byte) uint32 { return uint32(u16(b)) | uint32(u16(b[2:]))<<16 }
	case "MM\x00*":
		u16 = func(b []byte) uint16 { return uint16(b[1]) | uint16(b[0])<<8 }
		u32 = func(b []byte) uint32 { return uint32(u16(b[2:])) | uint32(u16(b))<<16 }
	default:
		return 0, false
	}
	off := int64(u32(t[4:8]))
	if off < 8 || off+2 > int64(len(t)) {
		return 0, false
	}
	count := int64(u16(t[off:]))
	for i := int64(0); i < count; i++ {
		e := off + 2 + i*12
		if e+12 > int64(len(t)) {
			return 0, false
		}
		if u16(t[e:]) != 0x0112 {
			continue
		}
		if u16(t[e+2:]) != 3 { // SHORT
			return 0, false
		}
		if v := int(u16(t[e+8:])); v >= 1 && v <= 8 {
			return v, true
		}
		return 0, false
	}
	return 0, false
}
