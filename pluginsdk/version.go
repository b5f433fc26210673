package pluginsdk

// Version is this SDK's own semantic version: pluginsdk is a Go module of
// its own (github.com/strata-archaeo/strata/pluginsdk), tagged
// pluginsdk/vX.Y.Z in the Strata repository, so a plugin outside the
// repository requires it by this version (PLUGINS.md, "The SDK module").
// It moves with the SDK's API, not with the server's version; the wire
// protocol has its own number (ProtocolVersion). CHANGELOG.md lists the
// versions.
const Version = "0.6.0"
