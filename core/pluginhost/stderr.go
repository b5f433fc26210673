package pluginhost

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// A plugin's standard error reaches the server's log by two ways:
//
//   - the process's own stderr, which go-plugin reads line by line: hclog
//     JSON lines (pluginsdk.Logger, the SDK's own) are re-logged at their
//     level; a line starting [DEBUG], [INFO], [WARN] or [ERROR] at that
//     level; a panic and what follows it at error; any other line at
//     debug, where a server logging at info would lose it. plainAsInfo
//     turns those plain lines into hclog JSON at info first.
//   - what the plugin writes to os.Stderr (or os.Stdout) once go-plugin's
//     Serve runs: Serve points them at pipes whose data comes over gRPC
//     (ClientConfig.SyncStderr), which lineLogger logs line by line.
//
// Either way a line is tagged with the plugin, and a plain one with its
// stream.

// plainAsInfo copies r, rewriting each plain line (not JSON, not
// level-prefixed, not part of a panic) as an hclog JSON line at info. It
// reads r to its end, so go-plugin, which waits for the returned reader's
// end before waiting for the process, keeps its order.
func plainAsInfo(r io.ReadCloser) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		inPanic := false
		var err error
		for err == nil {
			var line []byte
			line, err = br.ReadBytes('\n')
			if len(line) == 0 {
				continue
			}
			text := strings.TrimRight(string(line), "\r\n")
			switch {
			case inPanic, text == "", len(line) > 32<<10, text[0] == '{' && json.Valid([]byte(text)), hasLevelPrefix(text):
			case strings.HasPrefix(text, "panic: "), strings.HasPrefix(text, "fatal error: "):
				inPanic = true
			default:
				line = plainJSON(text, "stderr")
			}
			if _, werr := pw.Write(line); werr != nil {
				// Nobody reads any more: keep draining, so the plugin
				// never blocks on a full stderr pipe.
				_, _ = io.Copy(io.Discard, br)
				break
			}
		}
		_ = pw.Close()
	}()
	return readCloser{pr, r}
}

type readCloser struct {
	io.Reader
	inner io.Closer
}

func (rc readCloser) Close() error { return rc.inner.Close() }

func hasLevelPrefix(s string) bool {
	for _, p := range []string{"[TRACE]", "[DEBUG]", "[INFO]", "[WARN]", "[ERROR]"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// plainJSON is a plain line as hclog writes one at info, newline-ended.
func plainJSON(text, stream string) []byte {
	b, _ := json.Marshal(map[string]string{
		"@level": "info", "@message": text, "@timestamp": time.Now().Format("2006-01-02T15:04:05.000000Z07:00"),
		"stream": stream,
	})
	return append(b, '\n')
}

// lineLogger is an io.Writer logging each complete line written to it:
// an hclog JSON line at its level with its fields, any other at info,
// tagged with the plugin and stream.
type lineLogger struct {
	log    *slog.Logger
	stream string
	mu     sync.Mutex
	buf    []byte
}

func newLineLogger(l *slog.Logger, plugin, stream string) *lineLogger {
	return &lineLogger{log: l.With("plugin", plugin), stream: stream}
}

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.logLine(strings.TrimRight(string(w.buf[:i]), "\r"))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // a line without an end: log what there is
		w.logLine(string(w.buf))
		w.buf = nil
	}
	return len(p), nil
}

func (w *lineLogger) logLine(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	var entry map[string]any
	if text[0] == '{' && json.Unmarshal([]byte(text), &entry) == nil {
		if lvl, ok := entry["@level"].(string); ok {
			msg, _ := entry["@message"].(string)
			var args []any
			for k, v := range entry {
				if !strings.HasPrefix(k, "@") {
					args = append(args, k, v)
				}
			}
			w.log.Log(context.Background(), levelOf(lvl), msg, args...)
			return
		}
	}
	w.log.Log(context.Background(), slog.LevelInfo, text, "stream", w.stream)
}

func levelOf(s string) slog.Level {
	switch strings.ToLower(s) {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
