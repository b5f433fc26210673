// Package pluginhost runs Strata's plugins: separate processes speaking
// the protocol of pluginsdk/proto/v1 over hashicorp/go-plugin (gRPC only,
// AutoMTLS), as DESIGN.md §5 describes.
//
// The Manager discovers the executables of the plugin directory, starts
// each with a deadline, asks for its manifest (Describe), validates it and
// hands it the Host service over the go-plugin broker (Configure). A plugin
// that fails to start or has an invalid manifest is logged and not loaded;
// the server starts without it.
//
// # Environment of a plugin process
//
// The host's environment is not inherited (it holds database URLs and
// secrets a plugin has no business reading). A plugin gets only:
//
//   - STRATA_DATA_DIR: the instance's data directory, absolute (plugins
//     keep their own files below it, e.g. radiocarbon's <data-dir>/curves);
//   - STRATA_CURVES_DIR: when set for the server, passed on as is (the
//     radiocarbon plugin's curves added to or replacing its built-in ones);
//   - GAZETTEER_PLEIADES_URL, REFMGR_ZOTERO_URL (the providers' base URLs,
//     CONTRACT.md §10) and HTTPS_PROXY, HTTP_PROXY, NO_PROXY (either case):
//     when set for the server, passed on as they are;
//   - what go-plugin itself adds: the handshake cookie STRATA_PLUGIN,
//     PLUGIN_PROTOCOL_VERSIONS, PLUGIN_MIN_PORT/PLUGIN_MAX_PORT, the
//     AutoMTLS client certificate PLUGIN_CLIENT_CERT and
//     PLUGIN_UNIX_SOCKET_DIR, the folder for its socket (below).
//
// # Sockets
//
// go-plugin connects over Unix sockets, the plugin's listener and the
// server's (one per brokered Host service). They live in
// <Options.RunDir>/plugins-<server pid>/ (serve: <data-dir>/run), one
// folder per Manager and, inside it, one per plugin process, removed when
// the process is killed; Stop removes the Manager's folder, and Start
// removes the folders of servers that no longer run, so a killed server
// leaves nothing behind for long, and nothing in the system temp folder
// (sockets.go).
//
// The working directory is the server's. stdout belongs to go-plugin's
// handshake; stderr lines are re-logged through the server's slog logger,
// tagged with the plugin. On Linux a plugin is killed if the server dies
// without stopping it, so no orphan keeps running. Instance-level settings
// for a plugin are the JSON object in <plugin dir>/<name>.json, if any.
//
// # Supervision
//
// Each loaded plugin has a supervisor: when the process exits it is
// restarted after a backoff (0.5 s doubling up to 30 s); after 5 exits
// within 5 minutes the circuit breaker opens and the plugin stays
// "disabled" until an admin re-enables it (Manager.Enable). A process that
// is alive but stuck, answering no ping of go-plugin's gRPC health service
// for PingTimeout (20 s; pinged every 5 s), is killed and handled as an
// exit; the calls it was serving answer plugin_unresponsive (health.go).
// Calls to a
// plugin that is not running fail at once with plugin_unavailable; calls
// that are made have deadlines per kind (hooks 2 s, routes the manifest's
// timeout or 30 s, filter operators and record sections 5 s). A plugin
// never takes the server down with it.
package pluginhost
