package pluginsdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// NewGRPCPlugin returns the go-plugin glue serving p: what Serve hands to
// go-plugin, and what plugintest connects to in-process. Authors call
// Serve instead.
func NewGRPCPlugin(p Plugin) *GRPCPlugin {
	m := p.Manifest().withDefaults()
	return newGRPCPlugin(p, m, newLogger(m.Name))
}

// NewGRPCPluginLogged is NewGRPCPlugin with the SDK's own log lines (a
// recovered panic's stack) written to log instead of stderr: plugintest
// puts them in the test's log.
func NewGRPCPluginLogged(p Plugin, log hclog.Logger) *GRPCPlugin {
	return newGRPCPlugin(p, p.Manifest().withDefaults(), log)
}

// newLogger writes JSON lines to the process's stderr as it is now: before
// go-plugin swaps os.Stderr, that is the stream the server reads and
// re-logs at each line's level. Never stdout: go-plugin's handshake line
// goes there.
func newLogger(name string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      hclog.Debug,
	})
}

func newGRPCPlugin(p Plugin, m Manifest, log hclog.Logger) *GRPCPlugin {
	routes := make(map[string]http.Handler, len(m.Routes))
	for _, r := range m.Routes {
		if r.Handler != nil {
			routes[routeKey(r.Method, r.Path)] = r.Handler
		}
	}
	pm := manifestToProto(m)
	return &GRPCPlugin{NewServer: func(broker *plugin.GRPCBroker) pluginv1.PluginServer {
		return &server{p: p, manifest: pm, routes: routes, broker: broker, host: &hostClient{}, log: log}
	}}
}

func routeKey(method, path string) string { return strings.ToUpper(method) + " " + path }

// server implements the generated service for a Plugin: it converts
// between the wire messages and the typed API, and keeps the plugin's
// panics from taking the process down.
type server struct {
	pluginv1.UnimplementedPluginServer
	p        Plugin
	manifest *pluginv1.Manifest // built once: Describe is called after every start
	routes   map[string]http.Handler
	broker   *plugin.GRPCBroker
	host     *hostClient
	log      hclog.Logger
}

// guard turns a panic of the plugin's code into a gRPC error, so one bad
// call does not kill the process (and every other call in flight). The
// stack goes to stderr, which the server logs.
func (s *server) guard(call string, err *error) {
	if v := recover(); v != nil {
		s.log.Error("plugin panicked", "call", call, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		*err = panicStatus(v)
	}
}

func (s *server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	return s.manifest, nil
}

func (s *server) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (_ *pluginv1.ConfigureResponse, err error) {
	defer s.guard("Configure", &err)
	if id := req.GetHostBrokerId(); id != 0 {
		if s.broker == nil {
			return nil, status.Error(codes.FailedPrecondition, "no go-plugin broker to reach the Host service")
		}
		conn, err := s.broker.DialWithOptions(id, grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)))
		if err != nil {
			return nil, status.Errorf(codes.Unavailable, "dial the Host service (broker id %d): %v", id, err)
		}
		s.host.connect(conn)
	}
	if c, ok := s.p.(Configurer); ok {
		var settings json.RawMessage
		if len(req.GetSettings()) > 0 {
			settings = bytes.Clone(req.GetSettings())
		}
		if err := c.Configure(ctx, s.host, settings); err != nil {
			return nil, toStatus(err)
		}
	}
	return &pluginv1.ConfigureResponse{}, nil
}

var routeNotFound = []byte(`{"status":"error","code":"route_not_found","message":"the plugin has no such route"}`)

func (s *server) HandleRequest(ctx context.Context, req *pluginv1.HTTPRequest) (_ *pluginv1.HTTPResponse, err error) {
	defer s.guard("HandleRequest "+req.GetMethod()+" "+req.GetRoute(), &err)
	h := s.routes[routeKey(req.GetMethod(), req.GetRoute())]
	if h == nil {
		return &pluginv1.HTTPResponse{
			Status:  http.StatusNotFound,
			Headers: map[string]string{"Content-Type": "application/json; charset=utf-8"},
			Body:    routeNotFound,
		}, nil
	}
	r, err := buildRequest(ctx, req)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "bad HTTP request: %v", err)
	}
	rec := newRecorder()
	h.ServeHTTP(rec, r)
	if rec.overflow {
		return &pluginv1.HTTPResponse{
			Status:  http.StatusInternalServerError,
			Headers: map[string]string{"Content-Type": "application/json; charset=utf-8"},
			Body:    []byte(`{"status":"error","code":"response_too_large","message":"the plugin's response is larger than it may be"}`),
		}, nil
	}
	code := rec.status
	if code == 0 {
		code = http.StatusOK // as net/http: nothing written is an empty 200
	}
	return &pluginv1.HTTPResponse{Status: int32(code), Headers: rec.headers(), Body: rec.body.Bytes()}, nil
}

// buildRequest turns the wire request into what an http.Handler expects.
func buildRequest(ctx context.Context, req *pluginv1.HTTPRequest) (*http.Request, error) {
	path := req.GetPath()
	if path == "" {
		path = req.GetRoute()
	}
	u := &url.URL{Path: path, RawQuery: req.GetRawQuery()}
	var body io.Reader = http.NoBody
	if len(req.GetBody()) > 0 {
		body = bytes.NewReader(req.GetBody())
	}
	r, err := http.NewRequestWithContext(ctx, req.GetMethod(), u.String(), body)
	if err != nil {
		return nil, err
	}
	r.RequestURI = u.RequestURI() // as a server-side request has it
	for k, v := range req.GetHeaders() {
		r.Header.Set(k, v)
	}
	return WithRequestContext(r, actorFromProto(req.GetActor()), req.GetParams()), nil
}

func saveCallFromProto(req *pluginv1.SaveRequest) (SaveCall, error) {
	call := SaveCall{
		Feature: req.GetFeature(), Table: req.GetTable(), RowTable: req.GetRowTable(),
		Actor: actorFromProto(req.GetActor()), Rows: make([]Row, len(req.GetRows())),
	}
	for i, pr := range req.GetRows() {
		values, err := DecodeObject(pr.GetValues())
		if err != nil {
			return call, fmt.Errorf("row %d: %w", i, err)
		}
		var record map[string]any
		if len(bytes.TrimSpace(pr.GetRecord())) > 0 {
			if record, err = DecodeObject(pr.GetRecord()); err != nil {
				return call, fmt.Errorf("row %d record: %w", i, err)
			}
		}
		call.Rows[i] = Row{ID: pr.GetId(), ParentID: pr.GetParentId(), Values: values, Record: record}
	}
	return call, nil
}

func (s *server) BeforeSave(ctx context.Context, req *pluginv1.SaveRequest) (_ *pluginv1.SaveResponse, err error) {
	defer s.guard("BeforeSave "+req.GetFeature(), &err)
	bs, ok := s.p.(BeforeSaver)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "the plugin has no BeforeSave hook")
	}
	call, err := saveCallFromProto(req)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "bad save request: %v", err)
	}
	results, err := bs.BeforeSave(ctx, call)
	if err != nil {
		return nil, toStatus(err)
	}
	if results == nil {
		results = make([]RowResult, len(call.Rows))
	}
	if len(results) != len(call.Rows) {
		return nil, status.Errorf(codes.Internal, "BeforeSave returned %d results for %d rows", len(results), len(call.Rows))
	}
	resp := &pluginv1.SaveResponse{Rows: make([]*pluginv1.RowResult, len(results))}
	for i, res := range results {
		values := req.GetRows()[i].GetValues()
		if res.Values != nil {
			if values, err = encodeJSON(res.Values); err != nil {
				return nil, status.Errorf(codes.Internal, "BeforeSave row %d: values do not encode to JSON: %v", i, err)
			}
		} else if len(values) == 0 {
			values = []byte("{}")
		}
		pr := &pluginv1.RowResult{Values: values}
		for _, fe := range res.Errors {
			pr.Errors = append(pr.Errors, &pluginv1.FieldError{Field: fe.Field, Rule: fe.Rule, Message: fe.Message, Path: fe.Path})
		}
		resp.Rows[i] = pr
	}
	return resp, nil
}

func (s *server) AfterSave(ctx context.Context, req *pluginv1.SaveRequest) (_ *pluginv1.AfterSaveResponse, err error) {
	defer s.guard("AfterSave "+req.GetFeature(), &err)
	as, ok := s.p.(AfterSaver)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "the plugin has no AfterSave hook")
	}
	call, err := saveCallFromProto(req)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "bad save request: %v", err)
	}
	if err := as.AfterSave(ctx, call); err != nil {
		return nil, toStatus(err)
	}
	return &pluginv1.AfterSaveResponse{}, nil
}

func (s *server) ResolveFilter(ctx context.Context, req *pluginv1.FilterRequest) (_ *pluginv1.FilterResponse, err error) {
	defer s.guard("ResolveFilter "+req.GetOperator(), &err)
	fr, ok := s.p.(FilterResolver)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "the plugin has no filter operators")
	}
	res, err := fr.ResolveFilter(ctx, FilterCall{
		Operator: req.GetOperator(), Table: req.GetTable(), Field: req.GetField(),
		Value: json.RawMessage(bytes.Clone(req.GetValue())), Actor: actorFromProto(req.GetActor()),
	})
	if err != nil {
		return nil, toStatus(err)
	}
	if res.UseIDs {
		if res.Filter != nil {
			return nil, status.Error(codes.Internal, "ResolveFilter returned both a filter and UseIDs")
		}
		return &pluginv1.FilterResponse{UseIds: true, Ids: res.IDs}, nil
	}
	filter, err := optionalJSON(res.Filter)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "ResolveFilter: the filter does not encode to JSON: %v", err)
	}
	if t := bytes.TrimSpace(filter); len(t) == 0 || t[0] != '{' {
		return nil, status.Error(codes.Internal, "ResolveFilter returned neither a filter object nor ids")
	}
	return &pluginv1.FilterResponse{Filter: filter}, nil
}

func (s *server) EnrichRecord(ctx context.Context, req *pluginv1.EnrichRequest) (_ *pluginv1.EnrichResponse, err error) {
	defer s.guard("EnrichRecord "+req.GetSection(), &err)
	sp, ok := s.p.(SectionProvider)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "the plugin has no record sections")
	}
	sections, err := sp.EnrichRecords(ctx, EnrichCall{
		Section: req.GetSection(), Table: req.GetTable(), IDs: req.GetIds(), Actor: actorFromProto(req.GetActor()),
	})
	if err != nil {
		return nil, toStatus(err)
	}
	resp := &pluginv1.EnrichResponse{Sections: make(map[int64][]byte, len(sections))}
	for id, v := range sections {
		b, err := encodeJSON(v)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "EnrichRecords: section of record %d does not encode to JSON: %v", id, err)
		}
		resp.Sections[id] = b
	}
	return resp, nil
}
