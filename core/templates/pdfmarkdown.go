package templates

import (
	"strconv"
	"strings"

	"codeberg.org/go-pdf/fpdf"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	gmtext "github.com/yuin/goldmark/text"
)

var mdParser = goldmark.New().Parser()

// writeMarkdown lays Markdown source out as styled text between the
// page's current margins: paragraphs, headings in bold, emphasis in
// italic, strong in bold, lists with their bullets or numbers, code as it
// is. Raw HTML is left out (the HTML rendering sanitises it away too).
func writeMarkdown(f *fpdf.Fpdf, src string) {
	source := []byte(src)
	doc := mdParser.Parse(gmtext.NewReader(source))
	w := mdWriter{f: f, src: source, size: 10}
	first := true
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if !first {
			f.Ln(1.5)
		}
		first = false
		w.block(n, "")
	}
	if first { // nothing printable
		f.Ln(lineHeight)
	}
}

type mdWriter struct {
	f    *fpdf.Fpdf
	src  []byte
	size float64
	bold int
	ital int
}

func (w *mdWriter) style() {
	s := ""
	switch {
	case w.bold > 0:
		s = "B"
	case w.ital > 0:
		s = "I"
	}
	w.f.SetFont(family, s, w.size)
}

func (w *mdWriter) write(s string) {
	w.style()
	w.f.Write(lineHeight, s)
}

// block writes one block node; prefix goes before its first line (a
// list item's bullet).
func (w *mdWriter) block(n ast.Node, prefix string) {
	f := w.f
	switch b := n.(type) {
	case *ast.Heading:
		w.bold++
		w.size = max(10, 14-float64(b.Level))
		w.inlines(n)
		w.bold--
		w.size = 10
		f.Ln(lineHeight + 0.5)
	case *ast.Paragraph, *ast.TextBlock:
		if prefix != "" {
			w.write(prefix)
		}
		w.inlines(n)
		f.Ln(lineHeight)
	case *ast.List:
		i := b.Start
		for it := n.FirstChild(); it != nil; it = it.NextSibling() {
			mark := "•  "
			if b.IsOrdered() {
				mark = strconv.Itoa(i) + ".  "
				i++
			}
			left, _, _, _ := f.GetMargins()
			f.SetLeftMargin(left + 4)
			f.SetX(left + 4)
			first := true
			for c := it.FirstChild(); c != nil; c = c.NextSibling() {
				p := ""
				if first {
					p = mark
				}
				first = false
				w.block(c, p)
			}
			if first { // an empty item
				w.write(mark)
				f.Ln(lineHeight)
			}
			f.SetLeftMargin(left)
			f.SetX(left)
		}
	case *ast.Blockquote:
		w.ital++
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			w.block(c, prefix)
			prefix = ""
		}
		w.ital--
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		var sb strings.Builder
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			sb.Write(seg.Value(w.src))
		}
		w.style()
		left, _, right, _ := f.GetMargins()
		pw, _ := f.GetPageSize()
		f.MultiCell(pw-left-right, lineHeight, strings.TrimRight(sb.String(), "\n"), "", "L", false)
	case *ast.ThematicBreak:
		left, _, right, _ := f.GetMargins()
		pw, _ := f.GetPageSize()
		y := f.GetY() + lineHeight/2
		f.SetDrawColor(170, 170, 170)
		f.Line(left, y, pw-right, y)
		f.Ln(lineHeight)
	case *ast.HTMLBlock:
		// left out
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			w.block(c, prefix)
			prefix = ""
		}
	}
}

func (w *mdWriter) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.inline(c)
	}
}

func (w *mdWriter) inline(n ast.Node) {
	switch x := n.(type) {
	case *ast.Text:
		w.write(string(x.Segment.Value(w.src)))
		switch {
		case x.HardLineBreak():
			w.f.Ln(lineHeight)
		case x.SoftLineBreak():
			w.write(" ")
		}
	case *ast.String:
		w.write(string(x.Value))
	case *ast.Emphasis:
		if x.Level >= 2 {
			w.bold++
			defer func() { w.bold-- }()
		} else {
			w.ital++
			defer func() { w.ital-- }()
		}
		w.inlines(n)
	case *ast.CodeSpan:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				w.write(string(t.Segment.Value(w.src)))
			}
		}
	case *ast.AutoLink:
		w.write(string(x.URL(w.src)))
	case *ast.RawHTML:
		// left out
	default: // links, images' alt text…
		w.inlines(n)
	}
}
