package records

import (
	"context"
	"encoding/json"
	"fmt"
)

// StateAt is record id as it was at version (see RecordVersion), the base
// of a three-way merge (Merge3). A version is the id of a snapshot of the
// state before a change, so the state at version B is the content of the
// record's first snapshot with an id above B: the state the change after
// B replaced. With none, nothing has changed since B and the state is the
// current row. The record must exist within the caller's rows
// (ErrRecordNotFound otherwise, as for a missing one).
func StateAt(ctx context.Context, s *Scope, id, version int64) (*State, error) {
	current, err := s.readState(ctx, id)
	if err != nil {
		return nil, err
	}
	var content string
	err = s.DB.QueryRow(ctx, `SELECT content FROM `+s.DB.Sys("versions")+
		` WHERE tb = ? AND record_id = ? AND id > ? ORDER BY id LIMIT 1`, s.Table.Name, id, version).Scan(&content)
	if isNoRows(err) {
		return current, nil
	}
	if err != nil {
		return nil, fmt.Errorf("version of %s %d after %d: %w", s.Table.Name, id, version, err)
	}
	st := &State{}
	if err := json.Unmarshal([]byte(content), st); err != nil {
		return nil, fmt.Errorf("version of %s %d after %d: %w", s.Table.Name, id, version, err)
	}
	if st.Core == nil {
		st.Core = map[string]any{}
	}
	return st, nil
}
