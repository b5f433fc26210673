// Command testplugin is the plugin the plugin host's tests run as a real
// process. It implements the generated protocol directly with go-plugin
// (not pluginsdk.Serve), as a plugin written without the SDK would.
//
// Its behaviour depends on the name of its executable (the environment is
// not inherited, so tests copy the binary under another name):
//
//	testplug   the full plugin: a column feature with a required BeforeSave
//	           hook computing a column, a child-table feature, a dendro-like
//	           column feature computing from the hook's Record (rings), routes, filter
//	           operators, a record section and a system table; after
//	           POST /testplug/freeze its gRPC server stops answering anything,
//	           the health check included, as a wedged process would
//	testplug2  a second plugin with a system table of the same short name
//	badname    an invalid manifest name
//	oldproto   another protocol version in the manifest
//	collide    a route overlapping the server's /records/:tb
//	badfeature a feature named like a config route ("fields")
//	hang       never answers Describe
//	exit       exits before the handshake
//	zz_dupname another plugin called testplug
//	needsnew   needs a newer server protocol than the server's (min_server_protocol)
//	chatty     a plugin that only logs: pluginsdk.Logger at each level and
//	           a plain stderr line before serving, a plain stderr line and
//	           a stdout line once configured (the server's log must hold
//	           them all)
//	testmarks  a plugin with one non-required BeforeSave feature (marks:
//	           mark lower-cased, mark_len computed, "bad" refused, "slow"
//	           past the hook timeout) and POST /testmarks/sys (Host calls,
//	           op "update": Host.UpdateRecords)
//
// Variants built with -ldflags -X (a new version of a plugin is another
// binary, and the test cannot pass it an environment):
//
//	main.version=2.0.0  testplug's manifest says that version, adds the
//	                    filter operator _v2_ids and the route GET
//	                    /testplug/v2only, drops GET /testplug/teapot and
//	                    makes GET /testplug/public need read access
//	main.broken=1       testplug's manifest is invalid (an empty version)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

var mode = filepath.Base(os.Args[0])

// Set by -ldflags -X for the reload tests (see the package doc).
var (
	version = "1.2.3"
	broken  = ""
)

func main() {
	if mode == "exit" {
		os.Exit(2)
	}
	if mode == "chatty" {
		l := pluginsdk.Logger()
		l.Debug("chatty debug line", "n", 1)
		l.Info("chatty info line", "n", 2)
		l.Warn("chatty warn line", "n", 3)
		l.Error("chatty error line", "n", 4)
		fmt.Fprintln(os.Stderr, "chatty plain line before serving")
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: pluginsdk.Handshake,
		Plugins: plugin.PluginSet{pluginsdk.PluginKey: &pluginsdk.GRPCPlugin{
			NewServer: func(b *plugin.GRPCBroker) pluginv1.PluginServer { return &server{broker: b} },
		}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.UnaryInterceptor(freezeGate))...)
		},
	})
}

// frozen is set by POST /testplug/freeze: from then on every unary call,
// go-plugin's health service included, blocks for good (the process stays
// alive: only the host's health check can tell).
var frozen atomic.Bool

func freezeGate(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if frozen.Load() {
		select {} // ignores its deadline, like a wedged process
	}
	return handler(ctx, req)
}

type server struct {
	pluginv1.UnimplementedPluginServer
	broker   *plugin.GRPCBroker
	mu       sync.Mutex
	host     pluginv1.HostClient
	settings string
	after    atomic.Int64 // AfterSave calls
}

func text(name, typ, db string) *pluginv1.Column {
	return &pluginv1.Column{Name: name, Label: strings.ToUpper(name[:1]) + name[1:], Type: typ, DbType: db}
}

func manifest() *pluginv1.Manifest {
	switch mode {
	case "testplug2":
		return &pluginv1.Manifest{Name: "testplug2", Version: "0.2.0", ProtocolVersion: pluginsdk.ProtocolVersion,
			Routes:       []*pluginv1.Route{{Method: "POST", Path: "/testplug2/sys", Access: "edit"}},
			SystemTables: []*pluginv1.SystemTable{{Name: "notes", Columns: []*pluginv1.Column{text("body", "text", "text")}}}}
	case "chatty":
		return &pluginv1.Manifest{Name: "chatty", Version: "1.0.0", ProtocolVersion: pluginsdk.ProtocolVersion}
	case "badname":
		return &pluginv1.Manifest{Name: "Bad-Name", Version: "1.0.0", ProtocolVersion: pluginsdk.ProtocolVersion}
	case "oldproto":
		return &pluginv1.Manifest{Name: "oldproto", Version: "1.0.0", ProtocolVersion: 99}
	case "collide":
		return &pluginv1.Manifest{Name: "collide", Version: "1.0.0", ProtocolVersion: pluginsdk.ProtocolVersion,
			Routes: []*pluginv1.Route{{Method: "GET", Path: "/records/:tb", Access: "read"}}}
	case "needsnew":
		return &pluginv1.Manifest{Name: "needsnew", Version: "1.0.0", ProtocolVersion: pluginsdk.ProtocolVersion,
			MinServerProtocol: pluginsdk.ProtocolVersion + 1}
	case "testmarks":
		return &pluginv1.Manifest{Name: "testmarks", Version: "1.0.0", ProtocolVersion: pluginsdk.ProtocolVersion,
			Features: []*pluginv1.TableFeature{{Name: "marks", Label: "Marks",
				Columns:  []*pluginv1.Column{text("mark", "text", "text"), text("mark_len", "text", "int")},
				Computed: []string{"mark_len"}, BeforeSave: true}},
			Routes: []*pluginv1.Route{{Method: "POST", Path: "/testmarks/sys", Access: "edit"}}}
	case "badfeature":
		return &pluginv1.Manifest{Name: "badfeature", Version: "1.0.0", ProtocolVersion: pluginsdk.ProtocolVersion,
			Features: []*pluginv1.TableFeature{{Name: "fields", Columns: []*pluginv1.Column{text("f1", "text", "text")}}}}
	}
	m := testplug()
	if version != "1.2.3" {
		m.Version = version
		m.Operators = append(m.Operators, &pluginv1.FilterOperator{Name: "_v2_ids"})
		var routes []*pluginv1.Route
		for _, r := range m.Routes {
			switch r.Path {
			case "/testplug/teapot":
				continue
			case "/testplug/public":
				r.Access = "read"
			}
			routes = append(routes, r)
		}
		m.Routes = append(routes, &pluginv1.Route{Method: "GET", Path: "/testplug/v2only", Access: "read"})
	}
	if broken != "" {
		m.Version = ""
	}
	return m
}

func testplug() *pluginv1.Manifest {
	return &pluginv1.Manifest{
		Name: "testplug", Version: "1.2.3", ProtocolVersion: pluginsdk.ProtocolVersion, Description: "the plugin host's test plugin",
		Features: []*pluginv1.TableFeature{
			{Name: "labels", Aliases: []string{"label-set"}, Label: "Labels",
				Columns:  []*pluginv1.Column{text("label", "text", "text"), text("year", "text", "int")},
				Computed: []string{"year"}, BeforeSave: true, AfterSave: true, Required: true, SchemaFlag: "has_labels"},
			{Name: "samples", Label: "Samples",
				Child: &pluginv1.ChildTable{Suffix: "samples", Label: "Samples", Columns: []*pluginv1.Column{
					text("code", "text", "text"), text("weight", "text", "float"), text("double_weight", "text", "float"),
					text("pieces", "text", "int")}},
				Computed: []string{"double_weight"}, BeforeSave: true},
			// Tree rings: the felling date range is computed from the
			// row's Record only (last ring + sapwood, a margin that depends
			// on the table's species field), so a save that sends one of
			// the inputs relies on the stored other.
			{Name: "rings", Label: "Tree rings",
				Columns: []*pluginv1.Column{text("first_ring", "text", "int"), text("last_ring", "text", "int"),
					text("sapwood", "text", "int"), text("felling_from", "text", "int"), text("felling_to", "text", "int")},
				Computed: []string{"felling_from", "felling_to"}, BeforeSave: true,
				DependsOn: []string{"species", "no_such_field"}},
		},
		Routes: []*pluginv1.Route{
			{Method: "GET", Path: "/testplug/echo/:id", Access: "read"},
			{Method: "POST", Path: "/testplug/echo/:id", Access: "edit", BodyLimit: 1024},
			{Method: "GET", Path: "/testplug/public", Access: "public"},
			{Method: "GET", Path: "/testplug/slow", Access: "read", TimeoutMs: 300},
			{Method: "GET", Path: "/testplug/teapot", Access: "read"},
			{Method: "GET", Path: "/testplug/env", Access: "super_admin"},
			{Method: "GET", Path: "/testplug/stats", Access: "read"},
			{Method: "POST", Path: "/testplug/sys", Access: "edit"},
			{Method: "POST", Path: "/testplug/freeze", Access: "edit"},
			// The records of a table as the caller, the table named in
			// the path, by ?tb= (the default table parameter) or by
			// ?table= (a declared one).
			{Method: "GET", Path: "/testplug/rows/:tb", Access: "read"},
			{Method: "GET", Path: "/testplug/rows", Access: "read"},
			{Method: "POST", Path: "/testplug/rows", Access: "edit"},
			{Method: "GET", Path: "/testplug/named", Access: "read", TableParam: "table"},
		},
		Operators: []*pluginv1.FilterOperator{
			{Name: "_label_len", Fields: []string{"label"}, Feature: "labels"},
			{Name: "_label_pick", Fields: []string{"label"}, Feature: "labels"},
			{Name: "_any_ids"},
			{Name: "_slow_ids"}, // ignores its deadline
		},
		Sections:     []*pluginv1.RecordSection{{Name: "label_info", Feature: "labels"}},
		SystemTables: []*pluginv1.SystemTable{{Name: "notes", Columns: []*pluginv1.Column{text("body", "text", "text"), text("n", "text", "int"), text("done", "boolean", "bool")}}},
	}
}

func (s *server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	if mode == "hang" {
		time.Sleep(time.Minute)
	}
	return manifest(), nil
}

func (s *server) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	conn, err := s.broker.Dial(req.GetHostBrokerId())
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "dial host: %v", err)
	}
	s.mu.Lock()
	s.host = pluginv1.NewHostClient(conn)
	s.settings = string(req.GetSettings())
	s.mu.Unlock()
	if mode == "chatty" {
		// os.Stderr and os.Stdout are go-plugin's pipes by now.
		fmt.Fprintln(os.Stderr, "chatty plain line while serving")
		fmt.Fprintln(os.Stdout, "chatty stdout line while serving")
	}
	return &pluginv1.ConfigureResponse{}, nil
}

func (s *server) hostClient() pluginv1.HostClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

// clientError is how a plugin reports bad input (pluginsdk's convention).
func clientError(code, msg string) error {
	st := status.New(codes.InvalidArgument, msg)
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: code, Domain: pluginsdk.ErrorDomain}); err == nil {
		st = d
	}
	return st.Err()
}

func jsonResponse(code int, v any) *pluginv1.HTTPResponse {
	b, _ := json.Marshal(v)
	return &pluginv1.HTTPResponse{Status: int32(code), Headers: map[string]string{"Content-Type": "application/json; charset=utf-8"}, Body: b}
}

func (s *server) HandleRequest(ctx context.Context, req *pluginv1.HTTPRequest) (*pluginv1.HTTPResponse, error) {
	switch req.GetRoute() {
	case "/testplug/echo/:id", "/testplug/public":
		return jsonResponse(200, map[string]any{"status": "success", "method": req.GetMethod(), "route": req.GetRoute(),
			"path": req.GetPath(), "params": req.GetParams(), "query": req.GetRawQuery(), "headers": req.GetHeaders(),
			"body": string(req.GetBody()), "actor": req.GetActor()}), nil
	case "/testplug/slow":
		time.Sleep(2 * time.Second) // a plugin ignoring its deadline
		return jsonResponse(200, map[string]any{"status": "success"}), nil
	case "/testplug/teapot":
		return &pluginv1.HTTPResponse{Status: 418, Headers: map[string]string{"Content-Type": "text/plain; charset=utf-8", "X-Plugin": "testplug"},
			Body: []byte("short and stout")}, nil
	case "/testplug/env":
		s.mu.Lock()
		settings := s.settings
		s.mu.Unlock()
		return jsonResponse(200, map[string]any{"status": "success", "env": os.Environ(), "settings": settings, "pid": os.Getpid()}), nil
	case "/testplug/freeze":
		frozen.Store(true)
		return jsonResponse(200, map[string]any{"status": "success", "pid": os.Getpid()}), nil
	case "/testplug/stats":
		return jsonResponse(200, map[string]any{"status": "success", "after_save": s.after.Load(), "rings_calls": ringsCalls.Load()}), nil
	case "/testplug/sys", "/testplug2/sys", "/testmarks/sys":
		return s.sys(ctx, req)
	case "/testplug/rows/:tb", "/testplug/rows", "/testplug/named":
		return s.rows(ctx, req)
	}
	return jsonResponse(404, map[string]any{"status": "error", "code": "route_not_found"}), nil
}

// sysCall is the body of POST /testplug/sys: one Host call.
type sysCall struct {
	Op      string           `json:"op"` // write, read, query, settings, log, seal, open, geodata
	App     string           `json:"app"`
	Table   string           `json:"table"`
	Rows    []map[string]any `json:"rows"`
	Delete  []int64          `json:"delete"`
	Filter  json.RawMessage  `json:"filter"`
	Limit   int32            `json:"limit"`
	Offset  int32            `json:"offset"`
	AsActor bool             `json:"as_actor"`
	Purpose string           `json:"purpose"`  // seal, open
	Value   string           `json:"value"`    // seal: the clear value; open: the sealed one
	Record  int64            `json:"record"`   // geodata: the record
	Geom    json.RawMessage  `json:"geometry"` // geodata: GeoJSON
}

func (s *server) sys(ctx context.Context, req *pluginv1.HTTPRequest) (*pluginv1.HTTPResponse, error) {
	var call sysCall
	if err := json.Unmarshal(req.GetBody(), &call); err != nil {
		return jsonResponse(400, map[string]any{"status": "error", "code": "bad_body", "message": err.Error()}), nil
	}
	if call.App == "" {
		call.App = req.GetActor().GetApp()
	}
	h := s.hostClient()
	fail := func(err error) (*pluginv1.HTTPResponse, error) {
		st, _ := status.FromError(err)
		return jsonResponse(400, map[string]any{"status": "error", "code": "host_error", "grpc": st.Code().String(), "message": st.Message()}), nil
	}
	switch call.Op {
	case "write":
		upsert, _ := json.Marshal(call.Rows)
		resp, err := h.WriteSystemRows(ctx, &pluginv1.SystemWriteRequest{App: call.App, Table: call.Table, Upsert: upsert, DeleteIds: call.Delete})
		if err != nil {
			return fail(err)
		}
		return jsonResponse(200, map[string]any{"status": "success", "ids": resp.GetIds()}), nil
	case "read":
		resp, err := h.ReadSystemRows(ctx, &pluginv1.SystemReadRequest{App: call.App, Table: call.Table, Filter: call.Filter, Limit: call.Limit})
		if err != nil {
			return fail(err)
		}
		return jsonResponse(200, map[string]any{"status": "success", "rows": json.RawMessage(resp.GetRows())}), nil
	case "query":
		var actor *pluginv1.Actor
		if call.AsActor {
			actor = req.GetActor()
		}
		resp, err := h.QueryRecords(ctx, &pluginv1.QueryRequest{App: call.App, Table: call.Table, Filter: call.Filter,
			Limit: call.Limit, Offset: call.Offset, Actor: actor})
		if err != nil {
			return fail(err)
		}
		return jsonResponse(200, map[string]any{"status": "success", "total": resp.GetTotal(), "rows": json.RawMessage(resp.GetRows())}), nil
	case "settings":
		resp, err := h.AppSettings(ctx, &pluginv1.AppSettingsRequest{App: call.App})
		if err != nil {
			return fail(err)
		}
		return jsonResponse(200, map[string]any{"status": "success", "settings": resp.GetSettings()}), nil
	case "seal":
		resp, err := h.Seal(ctx, &pluginv1.SealRequest{App: call.App, Purpose: call.Purpose, Clear: call.Value})
		if err != nil {
			return fail(err)
		}
		return jsonResponse(200, map[string]any{"status": "success", "sealed": resp.GetSealed()}), nil
	case "open":
		resp, err := h.Open(ctx, &pluginv1.OpenRequest{App: call.App, Purpose: call.Purpose, Sealed: call.Value})
		if err != nil {
			return fail(err)
		}
		return jsonResponse(200, map[string]any{"status": "success", "clear": resp.GetClear()}), nil
	case "geodata":
		var actor *pluginv1.Actor
		if call.AsActor {
			actor = req.GetActor()
		}
		resp, err := h.AddGeodata(ctx, &pluginv1.AddGeodataRequest{App: call.App, Table: call.Table, RecordId: call.Record, Geometry: call.Geom, Actor: actor})
		if err != nil {
			return fail(err)
		}
		return jsonResponse(200, map[string]any{"status": "success", "id": resp.GetId()}), nil
	case "update":
		rows, _ := json.Marshal(call.Rows)
		resp, err := h.UpdateRecords(ctx, &pluginv1.UpdateRecordsRequest{App: call.App, Table: call.Table, Rows: rows})
		if err != nil {
			st, _ := status.FromError(err)
			reason := ""
			for _, d := range st.Details() {
				if info, ok := d.(*errdetails.ErrorInfo); ok {
					reason = info.GetReason()
				}
			}
			return jsonResponse(400, map[string]any{"status": "error", "code": "host_error", "reason": reason, "message": st.Message()}), nil
		}
		return jsonResponse(200, map[string]any{"status": "success", "versions": resp.GetVersions()}), nil
	case "log":
		if _, err := h.Log(ctx, &pluginv1.LogRequest{Level: "warn", Message: "hello from testplug", Fields: map[string]string{"k": "v"}}); err != nil {
			return fail(err)
		}
		return jsonResponse(200, map[string]any{"status": "success"}), nil
	}
	return jsonResponse(400, map[string]any{"status": "error", "code": "bad_op"}), nil
}

func decode(raw []byte) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(raw, &m)
	return m
}

func (s *server) BeforeSave(_ context.Context, req *pluginv1.SaveRequest) (*pluginv1.SaveResponse, error) {
	resp := &pluginv1.SaveResponse{}
	for _, r := range req.GetRows() {
		vals := decode(r.GetValues())
		res := &pluginv1.RowResult{}
		switch req.GetFeature() {
		case "labels":
			if label, ok := vals["label"].(string); ok {
				switch label {
				case "bad":
					res.Errors = append(res.Errors, &pluginv1.FieldError{Field: "label", Rule: "format", Message: "not a label", Path: "label[0]"})
				case "slow":
					time.Sleep(3 * time.Second)
				case "crash":
					os.Exit(3)
				}
				vals["label"] = strings.ToUpper(label)
				vals["year"] = len(label)
			}
		case "rings":
			rings(r, vals, res)
		case "marks":
			if mark, ok := vals["mark"].(string); ok {
				switch mark {
				case "bad":
					res.Errors = append(res.Errors, &pluginv1.FieldError{Field: "mark", Rule: "format", Message: "not a mark"})
				case "slow":
					time.Sleep(3 * time.Second)
				}
				vals["mark"] = strings.ToLower(mark)
				vals["mark_len"] = len(mark)
			}
		case "samples":
			if p, sent := vals["pieces"]; sent && p != nil {
				if n, ok := p.(float64); !ok || n != float64(int64(n)) {
					res.Errors = append(res.Errors, &pluginv1.FieldError{Field: "pieces", Rule: "whole_number", Message: "pieces is a whole number"})
				}
			}
			if w, ok := vals["weight"].(float64); ok {
				vals["double_weight"] = 2 * w
			} else if ws, ok := vals["weight"].(string); ok {
				if w, err := strconv.ParseFloat(ws, 64); err == nil {
					vals["double_weight"] = 2 * w
				}
			}
		}
		res.Values, _ = json.Marshal(vals)
		resp.Rows = append(resp.Rows, res)
	}
	return resp, nil
}

// rings checks a rings row and computes its felling range from the row's
// Record (the row as it will be stored): a new row needs its first ring,
// sapwood is a whole number of rings; without both last ring and sapwood
// the range is null. Calls are counted by species for the tests
// (GET /testplug/stats).
func rings(r *pluginv1.Row, vals map[string]any, res *pluginv1.RowResult) {
	rec := decode(r.GetRecord())
	ringsCalls.Add(1)
	if _, ok := rec["no_such_field"]; ok {
		res.Errors = append(res.Errors, &pluginv1.FieldError{Field: "first_ring", Rule: "record", Message: "the record holds a field the table lacks"})
	}
	if r.GetId() == 0 && rec["first_ring"] == nil {
		res.Errors = append(res.Errors, &pluginv1.FieldError{Field: "first_ring", Rule: "required", Message: "a new sample needs its first ring"})
	}
	if v, sent := vals["sapwood"]; sent && v != nil {
		if n, ok := v.(float64); !ok || n < 0 || n != float64(int64(n)) {
			res.Errors = append(res.Errors, &pluginv1.FieldError{Field: "sapwood", Rule: "rings", Message: "sapwood is a count of rings, 0 or more"})
		}
	}
	last, okLast := rec["last_ring"].(float64)
	sap, okSap := rec["sapwood"].(float64)
	if !okLast || !okSap {
		vals["felling_from"], vals["felling_to"] = nil, nil
		return
	}
	margin := 10.0
	if rec["species"] == "pine" {
		margin = 30
	}
	vals["felling_from"], vals["felling_to"] = last+sap, last+sap+margin
}

// ringsCalls counts the rings hook's rows.
var ringsCalls atomic.Int64

func (s *server) AfterSave(context.Context, *pluginv1.SaveRequest) (*pluginv1.AfterSaveResponse, error) {
	s.after.Add(1)
	return &pluginv1.AfterSaveResponse{}, nil
}

func (s *server) ResolveFilter(ctx context.Context, req *pluginv1.FilterRequest) (*pluginv1.FilterResponse, error) {
	var v any
	if err := json.Unmarshal(req.GetValue(), &v); err != nil {
		return nil, clientError("invalid_filter", "the operand is not JSON")
	}
	switch req.GetOperator() {
	case "_slow_ids":
		time.Sleep(3 * time.Second)
		return &pluginv1.FilterResponse{UseIds: true}, nil
	case "_label_len":
		n, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil {
			return nil, clientError("invalid_filter", "_label_len takes a number")
		}
		f, _ := json.Marshal(map[string]any{"year": map[string]any{"_eq": n}})
		return &pluginv1.FilterResponse{Filter: f}, nil
	case "_label_pick":
		list, ok := v.([]any)
		if !ok {
			return nil, clientError("invalid_filter", "_label_pick takes a list of labels")
		}
		f, _ := json.Marshal(map[string]any{"label": map[string]any{"_in": list}})
		resp, err := s.hostClient().QueryRecords(ctx, &pluginv1.QueryRequest{App: req.GetActor().GetApp(), Table: req.GetTable(),
			Filter: f, Columns: []string{"id"}, Limit: 10000, Actor: req.GetActor()})
		if err != nil {
			return nil, err
		}
		var rows []map[string]any
		_ = json.Unmarshal(resp.GetRows(), &rows)
		ids := []int64{}
		for _, r := range rows {
			ids = append(ids, int64(r["id"].(float64)))
		}
		return &pluginv1.FilterResponse{UseIds: true, Ids: ids}, nil
	case "_any_ids", "_v2_ids":
		list, _ := v.([]any)
		ids := []int64{}
		for _, x := range list {
			if n, err := strconv.ParseInt(fmt.Sprint(x), 10, 64); err == nil {
				ids = append(ids, n)
			}
		}
		return &pluginv1.FilterResponse{UseIds: true, Ids: ids}, nil
	}
	return nil, clientError("invalid_filter", "unknown operator")
}

func (s *server) EnrichRecord(_ context.Context, req *pluginv1.EnrichRequest) (*pluginv1.EnrichResponse, error) {
	out := &pluginv1.EnrichResponse{Sections: map[int64][]byte{}}
	for _, id := range req.GetIds() {
		out.Sections[id], _ = json.Marshal(map[string]any{"id": id, "note": "from testplug", "table": req.GetTable()})
	}
	return out, nil
}

// rows answers the codes of a table's records as the caller reads them
// (Host.QueryRecords as the actor), and the level the server gave the
// call; a Host refusal is 502 with its gRPC code, so a test tells it from
// the server's own gate.
func (s *server) rows(ctx context.Context, req *pluginv1.HTTPRequest) (*pluginv1.HTTPResponse, error) {
	q, _ := url.ParseQuery(req.GetRawQuery())
	table := req.GetParams()["tb"]
	if table == "" {
		table = q.Get("tb")
	}
	if req.GetRoute() == "/testplug/named" {
		table = q.Get("table")
	}
	resp, err := s.hostClient().QueryRecords(ctx, &pluginv1.QueryRequest{App: req.GetActor().GetApp(), Table: table,
		Columns: []string{"code"}, SortField: "code", Actor: req.GetActor()})
	if err != nil {
		st, _ := status.FromError(err)
		return jsonResponse(502, map[string]any{"status": "error", "code": "host_refused", "grpc": st.Code().String()}), nil
	}
	var rows []map[string]any
	_ = json.Unmarshal(resp.GetRows(), &rows)
	codes := []string{}
	for _, r := range rows {
		codes = append(codes, fmt.Sprint(r["code"]))
	}
	return jsonResponse(200, map[string]any{"status": "success", "codes": codes, "privilege": req.GetActor().GetPrivilege()}), nil
}
