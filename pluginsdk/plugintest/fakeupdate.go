package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"google.golang.org/grpc/codes"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// RecordUpdate is one record a plugin changed with Host.UpdateRecords.
type RecordUpdate struct {
	App, Table string
	ID         int64
	Values     map[string]any // as sent, numbers as json.Number
}

// RecordUpdates returns the records the plugin changed, in order.
func (h *FakeHost) RecordUpdates() []RecordUpdate {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.updates)
}

// UpdateRecords implements the Host service as the server does where a
// fake can: every column must be one of the manifest's features' (their
// columns or computed ones; which features are active on the table is not
// modelled), every id a record the test seeded (SetRecords), else nothing
// is written; the seeded records get the values. Versions are 1, 2, … per
// call.
func (h *FakeHost) UpdateRecords(_ context.Context, req *pluginv1.UpdateRecordsRequest) (*pluginv1.UpdateRecordsResponse, error) {
	var rows []map[string]any
	dec := json.NewDecoder(bytes.NewReader(req.GetRows()))
	dec.UseNumber()
	if err := dec.Decode(&rows); err != nil || len(rows) == 0 {
		return nil, hostErr(codes.InvalidArgument, "invalid_rows", "rows must be a JSON array of objects, each with a positive id")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	own := map[string]bool{}
	if h.manifest != nil {
		for _, f := range h.manifest.Features {
			for _, c := range f.Columns {
				own[c.Name] = true
			}
			for _, c := range f.Computed {
				own[c] = true
			}
		}
	}
	stored := h.records[req.GetApp()][req.GetTable()]
	targets := make([]int, len(rows))
	for i, r := range rows {
		for k := range r {
			if k != "id" && !own[k] {
				return nil, hostErr(codes.InvalidArgument, "not_plugin_field",
					fmt.Sprintf("row %d: %s is not a column of the plugin's features", i, k))
			}
		}
		targets[i] = slices.IndexFunc(stored, func(s map[string]any) bool { return fmt.Sprint(s["id"]) == fmt.Sprint(r["id"]) })
		if targets[i] < 0 {
			return nil, hostErr(codes.NotFound, "record_not_found", fmt.Sprintf("row %d: no record %v in %s", i, r["id"], req.GetTable()))
		}
	}
	versions := make([]int64, len(rows))
	for i, r := range rows {
		values := maps.Clone(r)
		delete(values, "id")
		maps.Copy(stored[targets[i]], values)
		id, _ := json.Number(fmt.Sprint(r["id"])).Int64()
		h.updates = append(h.updates, RecordUpdate{App: req.GetApp(), Table: req.GetTable(), ID: id, Values: values})
		versions[i] = int64(i + 1)
	}
	return &pluginv1.UpdateRecordsResponse{Versions: versions}, nil
}
