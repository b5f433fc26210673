// Package realplugins holds end-to-end tests and benchmarks of the plugins
// Strata ships (plugins/chronology, plugins/osteology, plugins/radiocarbon,
// and the route plugins gazetteer, refmgr and sequence):
// TestMain builds the real binaries once, and each test starts them under a
// pluginhost.Manager behind a real server on both engines.
//
// It is a package of its own so that building the plugins is paid only by
// these tests, not by every run of core/server or core/pluginhost.
//
//	go test -count=1 ./core/pluginhost/realplugins/
//	go test -run '^$' -bench RealPlugins -benchtime 1s ./core/pluginhost/realplugins/
//
// The radiocarbon plugin calibrates with its built-in curves; a
// STRATA_CURVES_DIR set for the test run is passed on to it, as the server
// does.
package realplugins
