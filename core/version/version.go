// Package version holds the service version reported by GET /api/info.
package version

import "runtime"

// Version is the semantic version of the service. The API is that of the
// specification's 5.9 line (application-scoped paths). Release builds may
// override it with -ldflags "-X .../core/version.Version=...".
var Version = "5.9.0"

// GoVersion is the Go toolchain the binary was built with.
func GoVersion() string { return runtime.Version() }
