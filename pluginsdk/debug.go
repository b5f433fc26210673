package pluginsdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/hashicorp/go-plugin"
)

// Debugging a plugin: started with DebugEnv set (by hand, or under a
// debugger such as dlv), Serve does not wait for the server's handshake
// but serves at once and prints one line on stdout,
//
//	STRATA_PLUGIN_REATTACH='{"munsell":{"Protocol":"grpc",...}}'
//
// which, in the server's environment, makes the server attach to this
// process instead of starting the plugin's executable (PLUGINS.md,
// "Debugging a plugin").
const (
	DebugEnv    = "STRATA_PLUGIN_DEBUG"
	ReattachEnv = "STRATA_PLUGIN_REATTACH"
)

// Reattach is one running plugin process the server attaches to: the
// JSON of each entry of ReattachEnv (the layout Terraform's
// TF_REATTACH_PROVIDERS uses, for familiarity).
type Reattach struct {
	Protocol        string       `json:"Protocol"`
	ProtocolVersion int          `json:"ProtocolVersion"`
	Pid             int          `json:"Pid"`
	Test            bool         `json:"Test"`
	Addr            ReattachAddr `json:"Addr"`
}

// ReattachAddr is where the plugin listens: network "unix" (a socket
// path) or "tcp" (host:port).
type ReattachAddr struct {
	Network string `json:"Network"`
	String  string `json:"String"`
}

// ParseReattach reads the value of ReattachEnv, a JSON object of plugin
// name → Reattach, into go-plugin's reattach configurations. An empty
// value is no plugin.
func ParseReattach(value string) (map[string]*plugin.ReattachConfig, error) {
	if value == "" {
		return nil, nil
	}
	var raw map[string]Reattach
	if err := json.Unmarshal([]byte(value), &raw); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of plugin name → reattach config: %v", ReattachEnv, err)
	}
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make(map[string]*plugin.ReattachConfig, len(raw))
	for _, name := range names {
		r := raw[name]
		var addr net.Addr
		var err error
		switch r.Addr.Network {
		case "unix":
			addr, err = net.ResolveUnixAddr("unix", r.Addr.String)
		case "tcp":
			addr, err = net.ResolveTCPAddr("tcp", r.Addr.String)
		default:
			err = fmt.Errorf("network %q is neither unix nor tcp", r.Addr.Network)
		}
		switch {
		case err != nil:
		case name == "":
			err = errors.New("no plugin name")
		case r.Addr.String == "":
			err = errors.New("no address")
		case r.Pid <= 0:
			err = errors.New("no Pid")
		case r.Protocol != string(plugin.ProtocolGRPC):
			err = fmt.Errorf("protocol %q is not grpc", r.Protocol)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: plugin %q: %v", ReattachEnv, name, err)
		}
		version := r.ProtocolVersion
		if version == 0 {
			version = ProtocolVersion
		}
		out[name] = &plugin.ReattachConfig{Protocol: plugin.ProtocolGRPC, ProtocolVersion: version,
			Addr: addr, Pid: r.Pid, Test: r.Test}
	}
	return out, nil
}

// serveForDebugger serves cfg in go-plugin's test mode: no handshake with
// a parent, no exit when stdin closes, and the reattach configuration
// printed on stdout for the server. It returns when the server shuts the
// plugin down (Test mode: the server's exit does not kill it) or on
// SIGINT/SIGTERM.
func serveForDebugger(cfg *plugin.ServeConfig, name string) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	cfg.Test = &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed}
	go plugin.Serve(cfg)
	select {
	case rc := <-reattach:
		line, err := json.Marshal(map[string]Reattach{name: {
			Protocol: string(rc.Protocol), ProtocolVersion: rc.ProtocolVersion, Pid: rc.Pid, Test: true,
			Addr: ReattachAddr{Network: rc.Addr.Network(), String: rc.Addr.String()},
		}})
		if err != nil {
			panic(err) // plain strings and numbers: cannot fail
		}
		fmt.Fprintf(os.Stdout, "%s='%s'\n", ReattachEnv, line)
		fmt.Fprintf(stderr, "plugin %s serving for a debugger (pid %d): start the server with the %s line above in its environment\n",
			name, rc.Pid, ReattachEnv)
	case <-closed:
		os.Exit(1) // Serve failed; it logged why
	}
	<-closed
}
