// Package pluginsdk is the only package a Strata plugin author imports. A
// plugin is a separate process that the Strata server starts and talks to
// over gRPC (hashicorp/go-plugin); its main function is one call:
//
//	func main() { pluginsdk.Serve(myPlugin{}) }
//
// The protocol is versioned in proto/v1 (generated code committed; `make
// proto` regenerates it). This package never imports the server's code,
// gin or gorm (a test enforces it), so plugins stay small and a server
// upgrade never breaks their build.
package pluginsdk
