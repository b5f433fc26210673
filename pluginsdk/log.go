package pluginsdk

import (
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// stderr is the process's standard error as it was at start: the stream
// the server reads and re-logs line by line. go-plugin's Serve later
// points os.Stderr at a pipe of its own, so a logger must hold this one.
var stderr = os.Stderr

var (
	loggerOnce sync.Once
	logger     hclog.Logger
)

// Logger is the plugin's logger: hclog JSON lines on standard error, which
// the server re-logs at each line's level (trace and debug as debug),
// tagged with the plugin's name, with the line's fields. It logs from
// debug up; the server's own level decides what is kept.
//
//	pluginsdk.Logger().Warn("curve file missing", "path", p)
//
// A plain line written to standard error (fmt.Fprintln(os.Stderr, ...),
// the standard log package) reaches the server's log too, at info. Host.Log
// is the other way to the server's log, over gRPC, for a call's context.
// Never log to stdout: go-plugin's handshake uses it.
func Logger() hclog.Logger {
	loggerOnce.Do(func() {
		logger = hclog.New(&hclog.LoggerOptions{Output: stderr, JSONFormat: true, Level: hclog.Debug})
	})
	return logger
}
