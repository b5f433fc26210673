package iiif

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/image/draw"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"
)

// Sink receives the files of a publication by slash path relative to the crate root. Only
// one writer is open at a time (the caller writes into a zip.Writer): WriteImage closes each
// writer before it asks for the next.
type Sink interface {
	Create(path string) (io.WriteCloser, error)
}

// Defaults of ImageOptions.
const (
	DefaultTileSize  = 512
	DefaultMaxPixels = 100_000_000
	DefaultMaxSide   = 4096
	DefaultQuality   = 85
)

// Context URIs and fixed values of the IIIF APIs.
const (
	ImageContext        = "http://iiif.io/api/image/3/context.json"
	ImageProtocol       = "http://iiif.io/api/image"
	PresentationContext = "http://iiif.io/api/presentation/3/context.json"
)

// ImageOptions tunes WriteImage. The zero value means every default.
type ImageOptions struct {
	// TileSize is the width and height of the square tiles (default 512, 16..4096).
	TileSize int
	// MaxPixels refuses images whose declared width*height is larger, before their pixels
	// are decoded (default 100 megapixels). Decoding a JPEG of n pixels costs about 1.5n
	// bytes (baseline) to 6n bytes (progressive); choose the limit with that in mind.
	MaxPixels int64
	// MaxSide is the largest side published: bigger images are downscaled first, keeping
	// their aspect ratio (default 4096).
	MaxSide int
	// Quality is the JPEG quality, 1..100 (default 85).
	Quality int
}

func (o ImageOptions) withDefaults() (ImageOptions, error) {
	if o.TileSize == 0 {
		o.TileSize = DefaultTileSize
	}
	if o.MaxPixels == 0 {
		o.MaxPixels = DefaultMaxPixels
	}
	if o.MaxSide == 0 {
		o.MaxSide = DefaultMaxSide
	}
	if o.Quality == 0 {
		o.Quality = DefaultQuality
	}
	switch {
	// Tiles below 16 pixels would turn one photograph into hundreds of thousands of files.
	case o.TileSize < 16 || o.TileSize > 4096:
		return o, fmt.Errorf("iiif: tile size %d outside 16..4096", o.TileSize)
	case o.MaxPixels < 0:
		return o, fmt.Errorf("iiif: negative MaxPixels %d", o.MaxPixels)
	case o.MaxSide < 1:
		return o, fmt.Errorf("iiif: MaxSide %d below 1", o.MaxSide)
	case o.Quality < 1 || o.Quality > 100:
		return o, fmt.Errorf("iiif: JPEG quality %d outside 1..100", o.Quality)
	}
	return o, nil
}

// Image is what WriteImage published: the image service's id, the published (possibly
// downscaled) dimensions, the sizes listed in info.json and every path written.
type Image struct {
	// ServiceID is the image service's id (the base URI of info.json).
	ServiceID string
	// Width and Height are the dimensions of the published full image.
	Width, Height int
	// Sizes are the reduced sizes listed in info.json, smallest first (the full size is
	// reached with "max").
	Sizes []Size
	// Paths lists every file written (info.json, tiles, sizes), sorted.
	Paths []string
}

// Size is a width and a height in pixels.
type Size struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// FullURI is the URI of the published full image, the body a manifest paints on a canvas.
func (im Image) FullURI() string { return im.ServiceID + "/full/max/0/default.jpg" }

// ErrUnsupportedFormat reports bytes that are not an image in a format WriteImage reads
// (JPEG, PNG, GIF, WebP, TIFF).
var ErrUnsupportedFormat = errors.New("iiif: not an image in a supported format (JPEG, PNG, GIF, WebP, TIFF)")

// ErrCorruptImage reports an image whose header or pixels cannot be decoded (truncated,
// damaged, zero-sized).
var ErrCorruptImage = errors.New("iiif: corrupt image")

// TooLargeError refuses an image whose declared dimensions exceed ImageOptions.MaxPixels. It
// is returned before any pixel is decoded, so a decompression bomb costs only its header.
type TooLargeError struct {
	Format        string
	Width, Height int
	MaxPixels     int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("iiif: %s image of %dx%d pixels exceeds the limit of %d pixels", e.Format, e.Width, e.Height, e.MaxPixels)
}

type codec struct {
	name         string
	decodeConfig func(io.Reader) (image.Config, error)
	decode       func(io.Reader) (image.Image, error)
}

// sniff picks the decoder by magic number rather than through image.Decode's registry, so
// the accepted formats are exactly these whatever other packages of the binary register.
func sniff(b []byte) (codec, bool) {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return codec{"jpeg", jpeg.DecodeConfig, jpeg.Decode}, true
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return codec{"png", png.DecodeConfig, png.Decode}, true
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return codec{"gif", gif.DecodeConfig, gif.Decode}, true
	case len(b) >= 12 && bytes.HasPrefix(b, []byte("RIFF")) && string(b[8:12]) == "WEBP":
		return codec{"webp", webp.DecodeConfig, webp.Decode}, true
	case bytes.HasPrefix(b, []byte("II*\x00")), bytes.HasPrefix(b, []byte("MM\x00*")):
		return codec{"tiff", tiff.DecodeConfig, tiff.Decode}, true
	}
	return codec{}, false
}

// WriteImage publishes one image as a IIIF Image API 3.0 level 0 service under dir (a clean
// slash path relative to the crate root, e.g. "iiif/finds-12-1") whose id is serviceID (an
// absolute http(s) URI without a trailing slash, whose last segments should map to dir).
//
// It writes dir/info.json and every file a level 0 client may compute from it, in the
// canonical forms of Image API 3.0:
//   - every tile at every scale factor: dir/{x},{y},{w},{h}/{sw},{sh}/0/default.jpg, region
//     in full-size pixels and size the scaled tile;
//   - every reduced size listed in "sizes": dir/full/{w},{h}/0/default.jpg (the sizes are the
//     whole image at each scale factor above 1, which is also the canonical URI of a tile
//     that covers the whole image);
//   - the full image: dir/full/max/0/default.jpg.
//
// Images wider or taller than opt.MaxSide are downscaled (Catmull-Rom) first; transparency
// is flattened on white; a JPEG's EXIF orientation is applied, so the published image is
// upright and Width/Height are its displayed dimensions. Nothing is written unless the image decodes, so an image refused
// with ErrUnsupportedFormat, ErrCorruptImage or *TooLargeError leaves the sink untouched; an
// error from the sink itself may leave some files written.
func WriteImage(sink Sink, dir, serviceID string, src io.Reader, opt ImageOptions) (Image, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Image{}, err
	}
	if dir == "." || !fs.ValidPath(dir) {
		return Image{}, fmt.Errorf("iiif: image directory %q is not a clean relative slash path", dir)
	}
	if err := checkHTTPURI(serviceID); err != nil {
		return Image{}, fmt.Errorf("iiif: service id: %w", err)
	}
	if serviceID[len(serviceID)-1] == '/' {
		return Image{}, fmt.Errorf("iiif: service id %q ends with a slash", serviceID)
	}

	work, err := decodeBounded(src, opt)
	if err != nil {
		return Image{}, err
	}
	w := &imageWriter{sink: sink, dir: dir, quality: opt.Quality}
	return w.publish(work, serviceID, opt.TileSize)
}

// decodeBounded reads the header, refuses oversized images, decodes the pixels and returns
// the working image: opaque RGBA, at most MaxSide on its longer side.
func decodeBounded(src io.Reader, opt ImageOptions) (*image.RGBA, error) {
	br := bufio.NewReaderSize(src, 64<<10)
	magic, _ := br.Peek(12) // a short read leaves too few bytes to sniff, reported below
	c, ok := sniff(magic)
	if !ok {
		return nil, ErrUnsupportedFormat
	}
	// The header bytes DecodeConfig consumes are kept and replayed for Decode, so the source
	// needs no seeking and is never held in memory whole (TIFF's decoder excepted).
	var header bytes.Buffer
	cfg, err := c.decodeConfig(io.TeeReader(br, &header))
	if err != nil {
		return nil, fmt.Errorf("%w: %s header: %v", ErrCorruptImage, c.name, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, fmt.Errorf("%w: %s declares %dx%d pixels", ErrCorruptImage, c.name, cfg.Width, cfg.Height)
	}
	if tooLarge(cfg.Width, cfg.Height, opt.MaxPixels) {
		return nil, &TooLargeError{Format: c.name, Width: cfg.Width, Height: cfg.Height, MaxPixels: opt.MaxPixels}
	}
	orientation := 1
	if c.name == "jpeg" {
		orientation = jpegOrientation(header.Bytes())
	}
	m, err := c.decode(io.MultiReader(bytes.NewReader(header.Bytes()), br))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorruptImage, c.name, err)
	}
	b := m.Bounds()
	if b.Dx() <= 0 || b.Dy() <= 0 {
		return nil, fmt.Errorf("%w: %s decodes to %dx%d pixels", ErrCorruptImage, c.name, b.Dx(), b.Dy())
	}
	// A decoder may return other bounds than its header declared (a GIF's first frame);
	// check again before allocating the working image.
	if tooLarge(b.Dx(), b.Dy(), opt.MaxPixels) {
		return nil, &TooLargeError{Format: c.name, Width: b.Dx(), Height: b.Dy(), MaxPixels: opt.MaxPixels}
	}
	tw, th := fitWithin(b.Dx(), b.Dy(), opt.MaxSide)
	work := image.NewRGBA(image.Rect(0, 0, tw, th))
	// White first, then the source over it: transparent pixels become white, as a JPEG has
	// no alpha.
	draw.Draw(work, work.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	if tw == b.Dx() && th == b.Dy() {
		draw.Draw(work, work.Bounds(), m, b.Min, draw.Over)
	} else {
		draw.CatmullRom.Scale(work, work.Bounds(), m, b, draw.Over, nil)
	}
	// The source is dead from here (Go's liveness analysis lets the collector take it) before
	// a rotation allocates its copy.
	return orient(work, orientation), nil
}

func tooLarge(w, h int, max int64) bool {
	// Each side is checked alone first so that the product cannot overflow.
	return int64(w) > max || int64(h) > max || int64(w)*int64(h) > max
}

// fitWithin scales w×h so that its longer side is at most max, rounding the shorter side
// to the nearest pixel and keeping it at least 1.
func fitWithin(w, h, max int) (int, int) {
	if w <= max && h <= max {
		return w, h
	}
	scale := func(a, b int) int { // a*max/b rounded, b the longer side
		v := (int64(a)*int64(max) + int64(b)/2) / int64(b)
		if v < 1 {
			v = 1
		}
		return int(v)
	}
	if w >= h {
		return max, scale(h, w)
	}
	return scale(w, h), max
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// scaleFactors are the powers of two from 1 up to the first at which the whole image fits
// in one tile, as a level 0 client expects a pyramid down to a single tile.
func scaleFactors(w, h, tile int) []int {
	fs := []int{1}
	for s := 1; ceilDiv(w, s) > tile || ceilDiv(h, s) > tile; {
		s *= 2
		fs = append(fs, s)
	}
	return fs
}

type infoJSON struct {
	Context  string     `json:"@context"`
	ID       string     `json:"id"`
	Type     string     `json:"type"`
	Protocol string     `json:"protocol"`
	Profile  string     `json:"profile"`
	Width    int        `json:"width"`
	Height   int        `json:"height"`
	Sizes    []Size     `json:"sizes,omitempty"`
	Tiles    []infoTile `json:"tiles"`
}

type infoTile struct {
	Width        int   `json:"width"`
	Height       int   `json:"height"`
	ScaleFactors []int `json:"scaleFactors"`
}

type imageWriter struct {
	sink    Sink
	dir     string
	quality int
	paths   []string
}

func (w *imageWriter) publish(work *image.RGBA, serviceID string, tile int) (Image, error) {
	W, H := work.Bounds().Dx(), work.Bounds().Dy()
	factors := scaleFactors(W, H, tile)
	var sizes []Size
	for i := len(factors) - 1; i >= 1; i-- {
		s := factors[i]
		sizes = append(sizes, Size{ceilDiv(W, s), ceilDiv(H, s)})
	}
	info := infoJSON{
		Context: ImageContext, ID: serviceID, Type: "ImageService3", Protocol: ImageProtocol,
		Profile: "level0", Width: W, Height: H, Sizes: sizes,
		Tiles: []infoTile{{Width: tile, Height: tile, ScaleFactors: factors}},
	}
	if err := w.writeJSON("info.json", info); err != nil {
		return Image{}, err
	}

	level := work
	for i, s := range factors {
		if i > 0 {
			level = halve(level)
		}
		lw, lh := level.Bounds().Dx(), level.Bounds().Dy()
		if lw != ceilDiv(W, s) || lh != ceilDiv(H, s) {
			// halve rounds up, and ceil(ceil(W/s)/2) == ceil(W/2s); a mismatch is a bug here.
			return Image{}, fmt.Errorf("iiif: level %d is %dx%d, want %dx%d", s, lw, lh, ceilDiv(W, s), ceilDiv(H, s))
		}
		full := "full/max"
		if s > 1 {
			full = "full/" + strconv.Itoa(lw) + "," + strconv.Itoa(lh)
		}
		if err := w.writeJPEG(full+"/0/default.jpg", level); err != nil {
			return Image{}, err
		}
		step := tile * s // a tile's side in full-size pixels
		for y := 0; y < H; y += step {
			for x := 0; x < W; x += step {
				rw, rh := min(step, W-x), min(step, H-y)
				sw, sh := ceilDiv(rw, s), ceilDiv(rh, s)
				p := fmt.Sprintf("%d,%d,%d,%d/%d,%d/0/default.jpg", x, y, rw, rh, sw, sh)
				r := image.Rect(x/s, y/s, x/s+sw, y/s+sh)
				if err := w.writeJPEG(p, level.SubImage(r)); err != nil {
					return Image{}, err
				}
			}
		}
	}
	sort.Strings(w.paths)
	return Image{ServiceID: serviceID, Width: W, Height: H, Sizes: sizes, Paths: w.paths}, nil
}

func (w *imageWriter) create(rel string, write func(io.Writer) error) error {
	p := w.dir + "/" + rel
	f, err := w.sink.Create(p)
	if err != nil {
		return fmt.Errorf("iiif: create %s: %w", p, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("iiif: write %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("iiif: close %s: %w", p, err)
	}
	w.paths = append(w.paths, p)
	return nil
}

func (w *imageWriter) writeJPEG(rel string, m image.Image) error {
	return w.create(rel, func(f io.Writer) error {
		return jpeg.Encode(f, m, &jpeg.Options{Quality: w.quality})
	})
}

func (w *imageWriter) writeJSON(rel string, v any) error {
	return w.create(rel, func(f io.Writer) error { return encodeJSON(f, v) })
}

// encodeJSON writes v indented (the crate is meant to be browsable) with HTML characters
// escaped, so that a label holding "</script>" stays inert if the JSON is embedded in a page.
func encodeJSON(f io.Writer, v any) error {
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// halve returns m at half size, rounding odd sides up, each pixel the mean of the (up to)
// four pixels it covers. A box filter is exact for a factor of two and cheap.
func halve(m *image.RGBA) *image.RGBA {
	w, h := m.Bounds().Dx(), m.Bounds().Dy()
	nw, nh := ceilDiv(w, 2), ceilDiv(h, 2)
	out := image.NewRGBA(image.Rect(0, 0, nw, nh))
	for y := 0; y < nh; y++ {
		y0, y1 := 2*y, min(2*y+1, h-1)
		for x := 0; x < nw; x++ {
			x0, x1 := 2*x, min(2*x+1, w-1)
			o := out.PixOffset(x, y)
			a, b := m.PixOffset(x0, y0), m.PixOffset(x1, y0)
			c, d := m.PixOffset(x0, y1), m.PixOffset(x1, y1)
			for k := 0; k < 4; k++ {
				sum := int(m.Pix[a+k]) + int(m.Pix[b+k]) + int(m.Pix[c+k]) + int(m.Pix[d+k])
				out.Pix[o+k] = uint8((sum + 2) / 4)
			}
		}
	}
	return out
}

func checkHTTPURI(s string) error {
	// Characters a URI cannot hold unescaped; url.Parse lets some of them through.
	if strings.ContainsAny(s, " \"<>\\^`{|}\t\r\n") {
		return fmt.Errorf("%q holds characters a URI must escape", s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%q is not an absolute http(s) URI", s)
	}
	return nil
}
