package pluginsdk

import (
	"context"
	"errors"
	"fmt"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// GeodataInput is a geometry for Host.AddGeodata.
type GeodataInput struct {
	App      string
	Table    string // a table whose geodata flag is set
	RecordID int64
	// Geometry is a GeoJSON geometry object in EPSG:4326 (any value that
	// encodes to one, e.g. map[string]any{"type": "Point", "coordinates":
	// []float64{12.48, 41.89}}, or a json.RawMessage).
	Geometry any
	// Actor is required: the write is made with the actor's rights (edit
	// on the table, own-record rule, row subset), as
	// POST /geoface/feature, and the record gets a version in its name.
	Actor *Actor
}

// ErrActorRequired is AddGeodata without an actor: a plugin never writes
// user data on its own behalf.
var ErrActorRequired = errors.New("pluginsdk: AddGeodata needs the actor of the call")

func (h *hostClient) AddGeodata(ctx context.Context, in GeodataInput) (int64, error) {
	c, err := h.get()
	if err != nil {
		return 0, err
	}
	if in.Actor == nil {
		return 0, ErrActorRequired
	}
	g, err := optionalJSON(in.Geometry)
	if err != nil {
		return 0, fmt.Errorf("add geodata: geometry: %w", err)
	}
	if len(g) == 0 {
		return 0, errors.New("add geodata: a GeoJSON geometry is required")
	}
	resp, err := c.AddGeodata(ctx, &pluginv1.AddGeodataRequest{App: in.App, Table: in.Table, RecordId: in.RecordID,
		Geometry: g, Actor: actorToProto(in.Actor)})
	if err != nil {
		return 0, fmt.Errorf("add geodata: %w", err)
	}
	return resp.GetId(), nil
}
