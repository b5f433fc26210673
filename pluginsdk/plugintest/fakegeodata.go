package plugintest

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Geodata is one feature a plugin added with Host.AddGeodata.
type Geodata struct {
	ID       int64
	App      string
	Table    string
	RecordID int64
	Geometry map[string]any // the GeoJSON geometry as sent
	Actor    *pluginsdk.Actor
}

// Geodata returns the features the plugin added, in order.
func (h *FakeHost) Geodata() []Geodata {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Geodata{}, h.geodata...)
}

// AddGeodata implements the Host service as the server does where a fake
// can: the actor is required, the record must be one the test seeded
// (SetRecords), the geometry a GeoJSON object with a type and
// coordinates. Rights and the table's geodata flag are not checked.
func (h *FakeHost) AddGeodata(_ context.Context, req *pluginv1.AddGeodataRequest) (*pluginv1.AddGeodataResponse, error) {
	if a := req.GetActor(); a == nil || (a.GetUserId() == 0 && a.GetApiKeyId() == 0) {
		return nil, hostErr(codes.InvalidArgument, "actor_required", "a geodata write is made as a user or API key")
	}
	var g map[string]any
	if err := json.Unmarshal(req.GetGeometry(), &g); err != nil || g["type"] == nil || g["coordinates"] == nil {
		return nil, hostErr(codes.InvalidArgument, "invalid_geometry", fmt.Sprintf("not a GeoJSON geometry: %s", req.GetGeometry()))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	found := false
	for _, r := range h.records[req.GetApp()][req.GetTable()] {
		if fmt.Sprint(r["id"]) == fmt.Sprint(req.GetRecordId()) {
			found = true
			break
		}
	}
	if !found {
		return nil, hostErr(codes.NotFound, "record_not_found", fmt.Sprintf("no record %d in %s", req.GetRecordId(), req.GetTable()))
	}
	id := int64(len(h.geodata) + 1)
	h.geodata = append(h.geodata, Geodata{ID: id, App: req.GetApp(), Table: req.GetTable(), RecordID: req.GetRecordId(),
		Geometry: g, Actor: actorFromProto(req.GetActor())})
	return &pluginv1.AddGeodataResponse{Id: id}, nil
}

// hostErr is an error as the server's Host sends it: its code as an
// ErrorInfo reason in pluginsdk's domain (pluginsdk.WriteHostError keeps it).
func hostErr(c codes.Code, reason, msg string) error {
	st := status.New(c, reason+": "+msg)
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: pluginsdk.ErrorDomain}); err == nil {
		st = d
	}
	return st.Err()
}
