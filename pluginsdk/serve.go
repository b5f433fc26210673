package pluginsdk

import (
	"fmt"
	"os"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// Serve runs p as a Strata plugin; it is the whole of a plugin's main:
//
//	func main() { pluginsdk.Serve(munsell{}) }
//
// It checks the manifest and the plugin first (Check) and exits with status
// 1 if they are wrong, so a broken plugin fails at start, visibly in the
// server's log, rather than on some later call. Then it serves over
// go-plugin until the server stops it. Started by hand (without the
// server's handshake cookie) it prints an explanation and exits.
//
// With STRATA_PLUGIN_DEBUG set, it serves for a debugger instead (DebugEnv).
//
// stdout belongs to go-plugin's handshake: log to stderr (which the server
// records) or through Host.Log, never with fmt.Print.
func Serve(p Plugin) {
	m := p.Manifest().withDefaults()
	log := newLogger(m.Name)
	if err := check(p, m); err != nil {
		log.Error("the plugin cannot start", "error", err.Error())
		os.Exit(1)
	}
	cfg := &plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{PluginKey: newGRPCPlugin(p, m, log)},
		// The default server, accepting messages up to MaxMessageSize: a
		// route's request body arrives as one message.
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return plugin.DefaultGRPCServer(append(opts, grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize)))
		},
		Logger: log,
	}
	if os.Getenv(DebugEnv) != "" {
		serveForDebugger(cfg, m.Name)
		return
	}
	plugin.Serve(cfg)
}

// Check reports everything wrong with p before it is served: the manifest
// rules (Manifest.Validate), a route without a Handler, and a capability
// the manifest asks for that p does not implement (a hook, an operator or a
// section without BeforeSaver, AfterSaver, FilterResolver or
// SectionProvider). A nil result or a *ManifestError.
func Check(p Plugin) error {
	return check(p, p.Manifest().withDefaults())
}

func check(p Plugin, m Manifest) error {
	var problems []string
	if err := m.Validate(); err != nil {
		problems = append(problems, err.(*ManifestError).Problems...)
	}
	for _, r := range m.Routes {
		if r.Handler == nil {
			problems = append(problems, fmt.Sprintf("route %s %s: no Handler", r.Method, r.Path))
		}
	}
	for _, f := range m.Features {
		if _, ok := p.(BeforeSaver); f.BeforeSave && !ok {
			problems = append(problems, fmt.Sprintf("feature %q asks for BeforeSave: the plugin does not implement BeforeSaver", f.Name))
		}
		if _, ok := p.(AfterSaver); f.AfterSave && !ok {
			problems = append(problems, fmt.Sprintf("feature %q asks for AfterSave: the plugin does not implement AfterSaver", f.Name))
		}
	}
	if _, ok := p.(FilterResolver); len(m.Operators) > 0 && !ok {
		problems = append(problems, "the manifest declares filter operators: the plugin does not implement FilterResolver")
	}
	if _, ok := p.(SectionProvider); len(m.Sections) > 0 && !ok {
		problems = append(problems, "the manifest declares record sections: the plugin does not implement SectionProvider")
	}
	if len(problems) > 0 {
		return &ManifestError{Problems: problems}
	}
	return nil
}
