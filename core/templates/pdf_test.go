package templates

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
)

func noImages(context.Context, int64) (io.ReadCloser, error) { return nil, errors.New("none") }

// markdownRecord is a record whose one Markdown field holds src.
func markdownRecord(src string) map[string]any {
	return map[string]any{"core": map[string]any{"notes": map[string]any{"label": "Notes", "val": src, "html": "<p>x</p>"}}}
}

// TestRenderPDFMarkdown: every kind of Markdown block and inline makes a
// whole PDF, however it nests.
func TestRenderPDFMarkdown(t *testing.T) {
	sections := []Section{{Type: "core", Items: []Item{{Field: "notes"}}}}
	for _, src := range []string{
		"plain",
		"# H1\n## H2\n###### H6",
		"**strong *both* strong** _em_ `code` [link](http://x) <http://auto.example> ![alt](i.png)",
		"- a\n- b\n  1. c\n  2. d\n\n   para in item\n-\n",
		"> quote **b**\n>\n> - in quote",
		"```\ncode\n  block\n```\n\n    indented",
		"---\n\n<div>html block</div>\n\ninline <span>raw</span> end  \nhard break",
		"ŻÓŁĆ ελληνικά кириллица ✓ → 中文",
		"",
	} {
		out, err := RenderPDF(context.Background(), "T", sections, markdownRecord(src), noImages)
		if err != nil || !bytes.HasPrefix(out, []byte("%PDF-")) || !bytes.Contains(out, []byte("%%EOF")) {
			t.Fatalf("%q: %v %.20q", src, err, out)
		}
	}
}

// FuzzMarkdownPDF: no Markdown a user types breaks the printing.
func FuzzMarkdownPDF(f *testing.F) {
	for _, s := range []string{"**a**", "- x\n  - y", "> q", "# h\n\ttab", "`x", "<b>x</b>", "1. a\n2. b"} {
		f.Add(s)
	}
	sections := []Section{{Type: "core", Items: []Item{{Field: "notes", Width: "1/2"}, {Field: "notes", Width: "1/2"}}}}
	f.Fuzz(func(t *testing.T, src string) {
		out, err := RenderPDF(context.Background(), "T", sections, markdownRecord(src), noImages)
		if err != nil || !bytes.HasPrefix(out, []byte("%PDF-")) {
			t.Fatalf("%q: %v", src, err)
		}
	})
}
