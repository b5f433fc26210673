package pluginhost

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// plainAsInfo rewrites plain lines only: go-plugin's own reading of JSON
// lines, level prefixes and panics (at error) must see them unchanged.
func TestPlainAsInfo(t *testing.T) {
	in := strings.Join([]string{
		`{"@level":"warn","@message":"hclog line"}`,
		`[ERROR] prefixed line`,
		`plain line`,
		`{not json`,
		``,
		`panic: boom`,
		``,
		`goroutine 1 [running]:`,
		`main.main()`,
	}, "\n") + "\n"
	out, err := io.ReadAll(plainAsInfo(io.NopCloser(strings.NewReader(in))))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	want := []string{"", `[ERROR] prefixed line`, "plain line", "{not json", "", "panic: boom", "", "goroutine 1 [running]:", "main.main()"}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	if lines[0] != `{"@level":"warn","@message":"hclog line"}` {
		t.Errorf("JSON line changed: %s", lines[0])
	}
	for i, w := range want {
		if i == 0 {
			continue
		}
		if w == "plain line" || w == "{not json" {
			var entry map[string]string
			if err := json.Unmarshal([]byte(lines[i]), &entry); err != nil || entry["@level"] != "info" ||
				entry["@message"] != w || entry["stream"] != "stderr" || entry["@timestamp"] == "" {
				t.Errorf("line %d: %s, want %q as hclog JSON at info", i, lines[i], w)
			}
			continue
		}
		if lines[i] != w {
			t.Errorf("line %d: %q, want it unchanged: %q", i, lines[i], w)
		}
	}
}

// lineLogger: JSON lines at their level with their fields, others at
// info; lines may come in pieces.
func TestLineLogger(t *testing.T) {
	var buf strings.Builder
	w := newLineLogger(newJSONLogger(&buf), "p", "stderr")
	for _, chunk := range []string{"first ha", "lf\n", `{"@level":"error","@message":"bad","k":"v"}` + "\n\n", "[no end]"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if len(got) != 2 || got[0]["msg"] != "first half" || got[0]["level"] != "INFO" || got[0]["stream"] != "stderr" ||
		got[0]["plugin"] != "p" || got[1]["msg"] != "bad" || got[1]["level"] != "ERROR" || got[1]["k"] != "v" {
		t.Errorf("logged: %v", got)
	}
}

func newJSONLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }
