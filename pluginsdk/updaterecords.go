package pluginsdk

import (
	"context"
	"errors"
	"fmt"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// UpdateRecordsInput is a change of records for Host.UpdateRecords.
type UpdateRecordsInput struct {
	App   string
	Table string
	// Rows are the records to change: each has "id" and values of the
	// plugin's own feature columns active on Table (computed ones
	// included); any other column refuses the whole call
	// (not_plugin_field) before anything is written.
	Rows []map[string]any
}

// UpdateRecords updates records as the system actor "plugin:<name>": one
// save per row through the server's save path (validation, the row's
// lock, a version of the record whose actor says it was the plugin), for
// recomputation after a model change. It returns each record's version
// after its save, in order; a failing row stops the call (the rows before
// it stay saved). The plugin's own hooks are not called for these saves.
func (h *hostClient) UpdateRecords(ctx context.Context, in UpdateRecordsInput) ([]int64, error) {
	c, err := h.get()
	if err != nil {
		return nil, err
	}
	if len(in.Rows) == 0 {
		return nil, errors.New("update records: no rows")
	}
	rows, err := encodeJSON(in.Rows)
	if err != nil {
		return nil, fmt.Errorf("update records: %w", err)
	}
	resp, err := c.UpdateRecords(ctx, &pluginv1.UpdateRecordsRequest{App: in.App, Table: in.Table, Rows: rows})
	if err != nil {
		return nil, fmt.Errorf("update records: %w", err)
	}
	return resp.GetVersions(), nil
}
