// Package pluginsdk is the only package a Strata plugin author imports. It
// will hold the versioned gRPC protocol (proto/v1), Serve, typed wrappers
// and the plugintest harness; it never imports core, gin or gorm.
//
// The protocol is not defined yet: see PLUGINS.md for the status.
package pluginsdk
