package records

import (
	"bytes"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
)

// Markdown fields are shown rendered; the HTML is sanitised because the
// text is user input and the client inserts the HTML as is.
var (
	mdRenderer = goldmark.New()
	mdPolicy   = bluemonday.UGCPolicy()
)

// RenderMarkdown returns sanitised HTML for a Markdown text.
func RenderMarkdown(src string) string {
	var buf bytes.Buffer
	if err := mdRenderer.Convert([]byte(src), &buf); err != nil {
		return mdPolicy.Sanitize(src)
	}
	return mdPolicy.Sanitize(buf.String())
}
