package pluginhost

import (
	"context"
	"io"
	"log"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// slogLogger is go-plugin's logger (hclog) writing to the server's slog
// logger: go-plugin re-logs each line a plugin writes to stderr through
// it, at the line's level, so plugin output lands in the server's log
// tagged with the plugin.
type slogLogger struct {
	log   *slog.Logger
	name  string
	args  []any
	level hclog.Level
}

func newSlogLogger(l *slog.Logger, plugin string) hclog.Logger {
	return &slogLogger{log: l.With("plugin", plugin), level: hclog.Debug}
}

func slogLevel(l hclog.Level) slog.Level {
	switch l {
	case hclog.Trace, hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (l *slogLogger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off || level < l.level {
		return
	}
	all := append(append([]any{}, l.args...), args...)
	if l.name != "" {
		all = append(all, "logger", l.name)
	}
	l.log.Log(context.Background(), slogLevel(level), msg, all...)
}

func (l *slogLogger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l *slogLogger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l *slogLogger) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l *slogLogger) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l *slogLogger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

func (l *slogLogger) IsTrace() bool { return l.level <= hclog.Trace }
func (l *slogLogger) IsDebug() bool { return l.level <= hclog.Debug }
func (l *slogLogger) IsInfo() bool  { return l.level <= hclog.Info }
func (l *slogLogger) IsWarn() bool  { return l.level <= hclog.Warn }
func (l *slogLogger) IsError() bool { return l.level <= hclog.Error }

func (l *slogLogger) ImpliedArgs() []any { return l.args }

func (l *slogLogger) With(args ...any) hclog.Logger {
	c := *l
	c.args = append(append([]any{}, l.args...), args...)
	return &c
}

func (l *slogLogger) Name() string { return l.name }

func (l *slogLogger) Named(name string) hclog.Logger {
	c := *l
	if c.name != "" {
		name = c.name + "." + name
	}
	c.name = name
	return &c
}

func (l *slogLogger) ResetNamed(name string) hclog.Logger {
	c := *l
	c.name = name
	return &c
}

func (l *slogLogger) SetLevel(level hclog.Level) { l.level = level }
func (l *slogLogger) GetLevel() hclog.Level      { return l.level }

func (l *slogLogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(l.StandardWriter(opts), "", 0)
}

func (l *slogLogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		l.Info(string(trimNewline(p)))
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func trimNewline(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}

var _ hclog.Logger = (*slogLogger)(nil)
