package records

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/strata-archaeo/strata/core/errs"
)

// ErrBaseGone is a merge base that retention has pruned (core/retention):
// a version above it was deleted, so the record's state at it is no
// longer known.
var ErrBaseGone = errs.New(errs.Conflict, "base_version_pruned",
	"the version this change was based on is no longer kept")

// BaseAt is StateAt for a merge base: the record as it was at version,
// or ErrBaseGone when a version of the record above it has been pruned
// (the first version after it, which holds that state, may be among
// them; the next one kept holds a later state, and merging against that
// would take the server's changes in between for the device's). The
// pruned mark and the version are read in one statement.
func BaseAt(ctx context.Context, s *Scope, id, version int64) (*State, error) {
	current, err := s.readState(ctx, id)
	if err != nil {
		return nil, err
	}
	var content sql.NullString
	var upto sql.NullInt64
	err = s.DB.QueryRow(ctx, `SELECT (SELECT content FROM `+s.DB.Sys("versions")+
		` WHERE tb = ? AND record_id = ? AND id > ? ORDER BY id LIMIT 1), (SELECT upto FROM `+s.DB.Sys("versions_pruned")+
		` WHERE tb = ? AND record_id = ?)`, s.Table.Name, id, version, s.Table.Name, id).Scan(&content, &upto)
	if err != nil {
		return nil, fmt.Errorf("version of %s %d after %d: %w", s.Table.Name, id, version, err)
	}
	if upto.Valid && upto.Int64 > version {
		return nil, ErrBaseGone.With("base_version", version)
	}
	if !content.Valid {
		return current, nil
	}
	st := &State{}
	if err := json.Unmarshal([]byte(content.String), st); err != nil {
		return nil, fmt.Errorf("version of %s %d after %d: %w", s.Table.Name, id, version, err)
	}
	if st.Core == nil {
		st.Core = map[string]any{}
	}
	return st, nil
}
