// Package pluginsdk is the only package a Strata plugin author imports. A
// plugin is a separate process that the Strata server starts and talks to
// over gRPC (hashicorp/go-plugin); its main function is one call:
//
//	func main() { pluginsdk.Serve(myPlugin{}) }
//
// A plugin is a value with a Manifest method (Plugin): the manifest says
// what it adds (table features with their columns or child table, HTTP
// routes, filter operators, record sections, system tables), and the
// optional interfaces do the work: Configurer (receives the Host, the
// plugin's only way to data), BeforeSaver and AfterSaver (hooks on saves),
// FilterResolver (filter operators), SectionProvider (sections of full
// records). Routes are ordinary http.Handlers; ActorFrom and Param read
// who calls and the path parameters. Values cross the wire as JSON and
// arrive decoded with numbers as json.Number (Int and Float read them).
//
// Errors: a bad input of the client is an *Error (a 400 with its code);
// in a save hook it is a FieldError instead. Any other error, or a panic,
// is a failure of the plugin: the call fails, the process keeps running.
//
// The subpackage plugintest runs a plugin in a test over a real gRPC
// connection against a fake Host, and checks it with Conformance.
// PLUGINS.md at the repository root is the guide, walking through
// plugins/example.
//
// The protocol is versioned in proto/v1 (generated code committed; `make
// proto` regenerates it). This package never imports the server's code,
// gin or gorm (a test enforces it), so plugins stay small and a server
// upgrade never breaks their build. Never write to stdout in a plugin:
// go-plugin's handshake uses it; log with Logger, to stderr, or with
// Host.Log.
//
// The SDK is a Go module of its own, github.com/strata-archaeo/strata/pluginsdk,
// versioned on its own (Version, CHANGELOG.md; tags pluginsdk/vX.Y.Z): a
// plugin outside the Strata repository requires it by version, with no
// replace. `strata plugin new NAME` writes such a module. A plugin started
// with STRATA_PLUGIN_DEBUG set serves for a debugger (DebugEnv).
package pluginsdk
