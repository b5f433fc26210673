package server_test

import (
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestWelcomePage: every signed-in user reads it, admins write it, and
// what could run in a browser is gone on save and on output.
func TestWelcomePage(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const url = "/dig/api/welcome"
		if code, m := f.do(t, f.reader, "GET", url, ""); code != 200 || m["content"] != "" || m["html"] != "" {
			t.Fatalf("empty: %d %v", code, m)
		}
		for _, tc := range []struct {
			name, who, body string
			status          int
			code            string
		}{
			{"writer", f.writer, `{"content":"x"}`, 403, "not_enough_privilege"},
			{"no content", f.super, `{}`, 400, "parameter_missing"},
			{"not text", f.super, `{"content":[1]}`, 400, "invalid_json"},
		} {
			if code, m := f.do(t, tc.who, "PUT", url, tc.body); code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		code, m := f.do(t, f.super, "PUT", url, `{"content":"# Scavo 2026\n\nSafe <?php echo 'evil'; ?> <script>alert(1)</script>text"}`)
		if code != 200 || m["code"] != "ok_save" {
			t.Fatalf("save: %d %v", code, m)
		}
		_, m = f.do(t, f.reader, "GET", url, "")
		content, html := m["content"].(string), m["html"].(string)
		if !strings.HasPrefix(content, "# Scavo 2026") || strings.Contains(content, "<?") || strings.Contains(content, "script") ||
			!strings.Contains(html, "<h1>Scavo 2026</h1>") || strings.Contains(html, "alert") {
			t.Fatalf("read back: %q / %q", content, html)
		}
	})
}
