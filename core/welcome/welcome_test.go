package welcome

import (
	"strings"
	"testing"
)

func TestCleanAndRender(t *testing.T) {
	cases := []struct {
		in, content      string
		htmlHas, htmlNot []string
	}{
		{"# Title\n\nText with 'quotes' & a > b.", "# Title\n\nText with 'quotes' & a > b.", []string{"<h1>Title</h1>", "&amp;"}, nil},
		{"Safe text <?php echo 'evil'; ?> more text", "Safe text  more text", nil, []string{"<?", "php"}},
		{"<script>alert(1)</script>Hello", "Hello", []string{"Hello"}, []string{"script", "alert"}},
		{`<a href="javascript:alert(1)" onclick="x()">link</a>`, "link", []string{"link"}, []string{"javascript", "onclick"}},
		{"<b>bold</b> and *em*", "<b>bold</b> and *em*", []string{"<b>bold</b>", "<em>em</em>"}, nil},
		{"<img src=x onerror=alert(1)>", `<img src="x">`, nil, []string{"onerror"}},
	}
	for _, tc := range cases {
		got := Clean(tc.in)
		if got != tc.content {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.content)
		}
		h := Render(got)
		for _, s := range tc.htmlHas {
			if !strings.Contains(h, s) {
				t.Errorf("Render(%q) = %q, lacks %q", got, h, s)
			}
		}
		for _, s := range tc.htmlNot {
			if strings.Contains(h, s) {
				t.Errorf("Render(%q) = %q, has %q", got, h, s)
			}
		}
	}
}
