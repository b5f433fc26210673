package pluginsdk

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// ProtocolVersion is the version of proto/v1 this SDK speaks. The server
// refuses a plugin of another version at the handshake.
const ProtocolVersion = 1

// Handshake is shared by the server and every plugin: the magic cookie
// keeps a plugin binary from being run by hand by mistake (it then prints
// a message and exits), and the version must match.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "STRATA_PLUGIN",
	MagicCookieValue: "d7c1f0e2-strata-plugin-protocol",
}

// PluginKey names the one plugin each binary serves in go-plugin's map.
const PluginKey = "strata"

// GRPCPlugin joins go-plugin and the generated service: the plugin side
// serves what NewServer builds (it gets the broker, through which it
// reaches the Host service after Configure), the server side gets a
// *Client. The embedded plugin.Plugin is nil: only gRPC is supported.
type GRPCPlugin struct {
	plugin.Plugin
	NewServer func(broker *plugin.GRPCBroker) pluginv1.PluginServer
}

// Client is what the server holds for a running plugin: the generated
// client and the broker through which the plugin reaches the Host service.
type Client struct {
	Plugin pluginv1.PluginClient
	Broker *plugin.GRPCBroker
}

// GRPCServer registers the plugin's service (plugin side).
func (p *GRPCPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterPluginServer(s, p.NewServer(broker))
	return nil
}

// GRPCClient returns the server side's handle on the plugin.
func (p *GRPCPlugin) GRPCClient(_ context.Context, broker *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &Client{Plugin: pluginv1.NewPluginClient(c), Broker: broker}, nil
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)
