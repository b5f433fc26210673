package templates

import (
	"bytes"
	"context"
	_ "embed" // the embedded fonts
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // decoding the PNGs fpdf cannot read as they are
	"io"
	"strings"

	"codeberg.org/go-pdf/fpdf"

	"github.com/strata-archaeo/strata/core/files"
)

// The PDF of a print template is made with fpdf (codeberg.org/go-pdf/fpdf,
// the maintained continuation of jung-kurt/gofpdf and go-pdf/fpdf): pure
// Go, UTF-8 through embedded TrueType fonts, JPEG and PNG embedded as they
// are. Text is drawn as text, never interpreted, so a value cannot inject
// anything; Markdown is laid out from its syntax tree as styled text, and
// raw HTML in it is left out.
//
// The fonts are DejaVu Sans (regular, bold, oblique), taken from Debian's
// fonts-dejavu-core 2.37; their licence (fonts/LICENSE, Bitstream Vera,
// DejaVu changes in the public domain) allows redistribution.

var (
	//go:embed fonts/DejaVuSans.ttf
	fontRegular []byte
	//go:embed fonts/DejaVuSans-Bold.ttf
	fontBold []byte
	//go:embed fonts/DejaVuSans-Oblique.ttf
	fontOblique []byte
)

// Page geometry, in millimetres (A4).
const (
	pageMargin   = 16.0
	pageTop      = 18.0
	pageBottom   = 18.0
	lineHeight   = 5.0
	labelHeight  = 4.0
	fieldGap     = 3.0
	cellPadding  = 1.2
	maxImageSize = 32 << 20 // bytes read of one image
	family       = "dejavu"
)

// ImageSource opens one of the record's files (its stored bytes).
type ImageSource func(ctx context.Context, fileID int64) (io.ReadCloser, error)

// RenderPDF lays the full record rec out by sections as an A4 PDF; the
// record's JPEG and PNG files, read through open, follow the sections,
// each scaled to the page's width. A file that cannot be read or decoded
// is left out rather than failing the print.
func RenderPDF(ctx context.Context, title string, sections []Section, rec map[string]any, open ImageSource) ([]byte, error) {
	v := layout(title, sections, rec)
	p := &pdfPage{f: fpdf.New("P", "mm", "A4", "")}
	f := p.f
	f.SetMargins(pageMargin, pageTop, pageMargin)
	f.SetAutoPageBreak(true, pageBottom)
	f.AddUTF8FontFromBytes(family, "", fontRegular)
	f.AddUTF8FontFromBytes(family, "B", fontBold)
	f.AddUTF8FontFromBytes(family, "I", fontOblique)
	f.SetTitle(v.Title, true)
	f.SetCreator("Strata", true)
	f.AliasNbPages("{nb}")
	f.SetFooterFunc(func() {
		f.SetY(-12)
		f.SetFont(family, "", 7.5)
		f.SetTextColor(120, 120, 120)
		f.CellFormat(0, 4, fmt.Sprintf("%s · %d / {nb}", v.Title, f.PageNo()), "", 0, "C", false, 0, "")
	})
	f.AddPage()

	f.SetFont(family, "B", 15)
	f.SetTextColor(17, 17, 17)
	f.MultiCell(0, 7, v.Title, "", "L", false)
	f.Ln(4)
	for _, s := range v.Sections {
		if s.Label != "" {
			p.heading(s.Label)
		}
		if s.Rows != nil {
			p.table(s.Columns, s.Rows)
		}
		for _, pn := range s.Panels {
			if pn.Label != "" {
				p.subheading(pn.Label)
			}
			p.fields(pn.Fields)
		}
	}
	for _, im := range v.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p.image(ctx, im, open)
	}
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("pdf: %w", err)
	}
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		return nil, fmt.Errorf("pdf: %w", err)
	}
	return buf.Bytes(), nil
}

type pdfPage struct{ f *fpdf.Fpdf }

func (p *pdfPage) contentWidth() float64 {
	w, _ := p.f.GetPageSize()
	return w - 2*pageMargin
}

// bottom is the lowest y content may reach on a page.
func (p *pdfPage) bottom() float64 {
	_, h := p.f.GetPageSize()
	return h - pageBottom
}

// room starts a new page unless h millimetres fit on this one.
func (p *pdfPage) room(h float64) {
	if p.f.GetY()+h > p.bottom() {
		p.f.AddPage()
	}
}

func (p *pdfPage) heading(label string) {
	f := p.f
	p.room(16) // a heading never ends a page
	f.Ln(3)
	f.SetFont(family, "B", 12)
	f.SetTextColor(17, 17, 17)
	f.MultiCell(0, 6, label, "", "L", false)
	y := f.GetY() + 0.5
	f.SetDrawColor(136, 136, 136)
	f.SetLineWidth(0.3)
	f.Line(pageMargin, y, pageMargin+p.contentWidth(), y)
	f.SetY(y + 2)
}

func (p *pdfPage) subheading(label string) {
	p.room(14)
	p.f.Ln(1)
	p.f.SetFont(family, "B", 10.5)
	p.f.MultiCell(0, 5.5, label, "", "L", false)
	p.f.Ln(1)
}

// fields lays core fields out in rows, each field taking its width's
// share of the line (1/2, 1/3…) as the HTML's flex rows do.
func (p *pdfPage) fields(fs []viewField) {
	var row []viewField
	used := 0.0
	for _, fd := range fs {
		if len(row) > 0 && used+fd.Width > 1.0001 {
			p.fieldRow(row)
			row, used = nil, 0
		}
		row = append(row, fd)
		used += fd.Width
	}
	if len(row) > 0 {
		p.fieldRow(row)
	}
}

func (p *pdfPage) fieldRow(row []viewField) {
	f := p.f
	full := p.contentWidth()
	pageW, _ := f.GetPageSize()
	// Keep a row of several columns on one page when it fits one; a
	// single field flows over pages as text does.
	if len(row) > 1 {
		h := 0.0
		for _, fd := range row {
			h = max(h, p.fieldHeight(fd, fd.Width*full-fieldGap))
		}
		if h < p.bottom()-pageTop {
			p.room(h)
		}
	} else {
		p.room(labelHeight + lineHeight)
	}
	page, top := f.PageNo(), f.GetY()
	x := pageMargin
	lowest, lowestPage := top, page
	for _, fd := range row {
		w := fd.Width*full - fieldGap
		if len(row) == 1 {
			w = fd.Width * full
		}
		f.SetPage(page)
		f.SetLeftMargin(x)
		f.SetRightMargin(pageW - x - w)
		f.SetXY(x, top)
		f.SetFont(family, "", 7)
		f.SetTextColor(85, 85, 85)
		f.MultiCell(w, labelHeight, strings.ToUpper(fd.Label), "", "L", false)
		f.SetTextColor(17, 17, 17)
		f.SetFont(family, "", 10)
		if fd.Markdown != "" {
			writeMarkdown(f, fd.Markdown)
		} else {
			f.MultiCell(w, lineHeight, valueText(fd.Value), "", "L", false)
		}
		if pg, y := f.PageNo(), f.GetY(); pg > lowestPage || (pg == lowestPage && y > lowest) {
			lowest, lowestPage = y, pg
		}
		x += fd.Width * full
	}
	f.SetLeftMargin(pageMargin)
	f.SetRightMargin(pageMargin)
	f.SetPage(lowestPage)
	f.SetXY(pageMargin, lowest+fieldGap)
}

// fieldHeight estimates a field's height in a column of width w.
func (p *pdfPage) fieldHeight(fd viewField, w float64) float64 {
	p.f.SetFont(family, "", 10)
	s := valueText(fd.Value)
	if fd.Markdown != "" {
		s = fd.Markdown
	}
	return labelHeight + lineHeight*float64(max(1, len(p.f.SplitText(s, w))))
}

func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// table prints a plugin's rows with a header, repeated on every page the
// table spans; cells wrap.
func (p *pdfPage) table(cols []string, rows [][]string) {
	f := p.f
	if len(cols) == 0 {
		return
	}
	w := p.contentWidth() / float64(len(cols))
	header := func() {
		f.SetFont(family, "B", 9)
		p.tableRow(cols, w, true)
		f.SetFont(family, "", 9)
	}
	p.room(2 * (lineHeight + 2*cellPadding))
	header()
	if len(rows) == 0 {
		f.SetFont(family, "I", 9)
		f.SetTextColor(100, 100, 100)
		f.CellFormat(p.contentWidth(), lineHeight+2*cellPadding, "—", "1", 1, "C", false, 0, "")
		f.SetTextColor(17, 17, 17)
	}
	for _, r := range rows {
		if f.GetY()+p.rowHeight(r, w) > p.bottom() {
			f.AddPage()
			header()
		}
		p.tableRow(r, w, false)
	}
	f.Ln(2)
}

func (p *pdfPage) rowHeight(cells []string, w float64) float64 {
	n := 1
	for _, c := range cells {
		n = max(n, len(p.f.SplitText(c, w-2*cellPadding)))
	}
	return float64(n)*lineHeight + 2*cellPadding
}

func (p *pdfPage) tableRow(cells []string, w float64, head bool) {
	f := p.f
	h := p.rowHeight(cells, w)
	x, y := pageMargin, f.GetY()
	f.SetDrawColor(170, 170, 170)
	f.SetLineWidth(0.2)
	f.SetFillColor(238, 238, 238)
	for _, c := range cells {
		style := "D"
		if head {
			style = "FD"
		}
		f.Rect(x, y, w, h, style)
		f.SetXY(x+cellPadding, y+cellPadding)
		f.MultiCell(w-2*cellPadding, lineHeight, c, "", "L", false)
		x += w
	}
	f.SetXY(pageMargin, y+h)
}

// image embeds one of the record's files scaled to the page's width (and
// to the page's height when it is tall). JPEG and 8-bit, non-interlaced
// PNG go in as they are; other PNGs are decoded and re-encoded as JPEG.
func (p *pdfPage) image(ctx context.Context, im imageRef, open ImageSource) {
	f := p.f
	data, typ, ok := imageBytes(ctx, im, open)
	if !ok {
		return
	}
	name := fmt.Sprintf("file-%d", im.ID)
	info := f.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: typ}, bytes.NewReader(data))
	if info == nil || f.Err() {
		return
	}
	w := p.contentWidth()
	h := w * info.Height() / info.Width()
	if maxH := p.bottom() - pageTop; h > maxH {
		w, h = w*maxH/h, maxH
	}
	p.room(h + fieldGap)
	f.ImageOptions(name, pageMargin, f.GetY()+fieldGap, w, h, false, fpdf.ImageOptions{ImageType: typ}, 0, "")
	f.SetY(f.GetY() + fieldGap + h)
}

// imageBytes reads a file and makes it something fpdf reads: a file that
// does not decode as an image is refused here, so fpdf's own parser (which
// fails the whole document) only sees good ones.
func imageBytes(ctx context.Context, im imageRef, open ImageSource) ([]byte, string, bool) {
	rc, err := open(ctx, im.ID)
	if err != nil {
		return nil, "", false
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxImageSize+1))
	if err != nil || len(data) > maxImageSize {
		return nil, "", false
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width == 0 || cfg.Height == 0 {
		return nil, "", false
	}
	switch {
	case format == "jpeg":
		return data, "JPG", true
	case format == "png" && pngAsIs(data):
		return data, "PNG", true
	}
	// Decoded here only: the same budget as an upload's (a small PNG may
	// declare hundreds of megabytes of pixels).
	if files.CheckDecodable(cfg, files.DefaultMaxPixels) != nil {
		return nil, "", false
	}
	m, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, "", false
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 90}); err != nil {
		return nil, "", false
	}
	return buf.Bytes(), "JPG", true
}

// pngAsIs: fpdf reads PNGs of at most 8 bits a channel, not interlaced
// (IHDR: bit depth at byte 24, interlace method at byte 28).
func pngAsIs(data []byte) bool {
	return len(data) > 28 && data[24] <= 8 && data[28] == 0
}
