package pluginsdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// serveEnv makes the test binary a plugin process: the Serve tests start
// it again the way the server starts a plugin binary.
const serveEnv = "PLUGINSDK_TEST_SERVE"

func TestMain(m *testing.M) {
	switch os.Getenv(serveEnv) {
	case "probe":
		pluginsdk.Serve(&probe{})
		os.Exit(0)
	case "invalid":
		pluginsdk.Serve(invalidPlugin{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type invalidPlugin struct{}

func (invalidPlugin) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{Name: "Bad-Name", Version: "1"}
}

// startProcess runs the test binary as a plugin with go-plugin's client,
// configured as the server configures it: gRPC only, AutoMTLS, the host's
// environment not inherited, messages up to MaxMessageSize.
func startProcess(t *testing.T, mode string) *pluginsdk.Client {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{serveEnv + "=" + mode}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginsdk.Handshake,
		Plugins:          plugin.PluginSet{pluginsdk.PluginKey: &pluginsdk.GRPCPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		StartTimeout:     20 * time.Second,
		Logger:           hclog.NewNullLogger(),
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(pluginsdk.MaxMessageSize), grpc.MaxCallSendMsgSize(pluginsdk.MaxMessageSize))},
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("start the plugin process: %v", err)
	}
	raw, err := rpc.Dispense(pluginsdk.PluginKey)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*pluginsdk.Client)
}

// TestServeAsAProcess is the real path: handshake on stdout, TLS, the
// Host service brokered back to the plugin, a large body both ways, and a
// panic that the process survives.
func TestServeAsAProcess(t *testing.T) {
	c := startProcess(t, "probe")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	m, err := c.Plugin.Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil || m.GetName() != "probe" || m.GetProtocolVersion() != pluginsdk.ProtocolVersion {
		t.Fatalf("Describe: %v %v", m, err)
	}

	host := plugintest.NewFakeHost()
	host.SetRecords("demo", "finds", map[string]any{"kind": "pot"})
	id := c.Broker.NextId()
	go c.Broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(pluginsdk.MaxMessageSize))...)
		pluginv1.RegisterHostServer(s, host)
		return s
	})
	if _, err := c.Plugin.Configure(ctx, &pluginv1.ConfigureRequest{HostBrokerId: id, Settings: []byte(`{}`)}); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	actor := &pluginv1.Actor{App: "demo", UserId: 1, Privilege: 30}
	resp, err := c.Plugin.HandleRequest(ctx, &pluginv1.HTTPRequest{Method: "POST", Route: "/probe/host", Path: "/probe/host", Actor: actor})
	if err != nil || resp.GetStatus() != 200 || !bytes.Contains(resp.GetBody(), []byte(`"kind":"pot"`)) {
		t.Fatalf("a route using the Host: %v %s %v", resp.GetStatus(), resp.GetBody(), err)
	}
	if logs := host.Logs(); len(logs) != 1 {
		t.Errorf("Host.Log from the process: %v", logs)
	}

	big := bytes.Repeat([]byte("a"), 8<<20) // twice gRPC's default message cap
	resp, err = c.Plugin.HandleRequest(ctx, &pluginv1.HTTPRequest{Method: "POST", Route: "/probe/echo/:id", Path: "/probe/echo/1",
		Params: map[string]string{"id": "1"}, Body: big, Actor: actor})
	if err != nil || resp.GetStatus() != 201 || len(resp.GetBody()) < len(big) {
		t.Fatalf("large body: %v %d bytes %v", resp.GetStatus(), len(resp.GetBody()), err)
	}

	if _, err := c.Plugin.HandleRequest(ctx, &pluginv1.HTTPRequest{Method: "GET", Route: "/probe/panic"}); !pluginsdk.IsPanic(err) {
		t.Errorf("panic: %v", err)
	}
	if _, err := c.Plugin.EnrichRecord(ctx, &pluginv1.EnrichRequest{Section: "probe_section", Ids: []int64{1}}); err != nil {
		t.Errorf("after the panic, the process answers: %v", err)
	}
	_, err = c.Plugin.ResolveFilter(ctx, &pluginv1.FilterRequest{Operator: "_probe_ids", Value: []byte(`"x"`)})
	if e, ok := pluginsdk.ErrorFromStatus(err); !ok || e.Code != "invalid_filter" {
		t.Errorf("a client error from the process: %v", err)
	}
}

// TestServeRefusesAnInvalidPlugin: Serve checks before serving, exits 1,
// says why on stderr and writes nothing on stdout (no handshake line).
func TestServeRefusesAnInvalidPlugin(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{serveEnv + "=invalid", pluginsdk.Handshake.MagicCookieKey + "=" + pluginsdk.Handshake.MagicCookieValue}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout: %q", stdout.String())
	}
	var line struct {
		Level string `json:"@level"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stderr.Bytes()), &line); err != nil ||
		!strings.Contains(line.Error, `name "Bad-Name"`) || line.Level != "error" {
		t.Errorf("stderr: %q (%v)", stderr.String(), err)
	}
}
