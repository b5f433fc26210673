package fieldsync

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
)

// rsChange is a mutation's stratigraphic relation change (docs/sync.md,
// "Relations"): add one between two records of the mutation's table, or
// delete one by its id. One of the two.
type rsChange struct {
	Add    *rsAdd `json:"add,omitempty"`
	Delete int64  `json:"delete,omitempty"`
}

// rsAdd is (first, relation, second) as POST /record/{tb}/rs takes it;
// each end is an id or {"temp_id": "t"}, a record this device created.
type rsAdd struct {
	First    any   `json:"first"`
	Relation int64 `json:"relation"`
	Second   any   `json:"second"`
}

// rsEnd reads one end of a relation: an id, or a temp_id.
func rsEnd(v any) (id int64, temp string, err error) {
	if ref, ok := v.(map[string]any); ok {
		temp, err = tempRef(ref)
		return 0, temp, err
	}
	switch x := v.(type) {
	case json.Number, float64:
		var n int64
		if n, err = api.ParseID(x); err == nil && n > 0 {
			return n, "", nil
		}
	}
	return 0, "", errors.New(`an end is a record id or {"temp_id": "<a temp_id of this device>"}`)
}

// checkRS refuses a relation mutation of a shape no device sends.
func (m *mutation) checkRS(bad func(field, why string) error) error {
	rs := m.RS
	switch {
	case m.ID != 0 || m.TempID != "" || m.BaseVersion != nil || len(m.Set) > 0 || m.Delete || len(m.Plugins) > 0:
		return bad("rs", "a relation mutation carries only rs (and mutation_id, device_id, seq, table)")
	case (rs.Add == nil) == (rs.Delete == 0):
		return bad("rs", `rs is {"add": {...}} or {"delete": <relation id>}`)
	case rs.Delete < 0:
		return bad("rs.delete", "ids are positive integers")
	case rs.Add != nil && (rs.Add.Relation < 1 || rs.Add.Relation > 10):
		return bad("rs.add.relation", "a relation code from 1 to 10")
	}
	if rs.Add != nil {
		for _, e := range []struct {
			field string
			v     any
		}{{"rs.add.first", rs.Add.First}, {"rs.add.second", rs.Add.Second}} {
			if _, _, err := rsEnd(e.v); err != nil {
				return bad(e.field, err.Error())
			}
		}
	}
	return nil
}

// relation applies a relation mutation through the records package, as
// the pusher: the relation route's rules and codes (a record the caller
// cannot see is record_not_found, as a missing one). The answer's id is
// the relation's.
func (a *applier) relation(ctx context.Context, tx *store.DB, sc *records.Scope, m *mutation) (result, error) {
	r := result{MutationID: m.MutationID, Status: statusApplied, Table: m.Table}
	if m.RS.Delete > 0 {
		r.ID = m.RS.Delete
		return r, records.DeleteRelation(ctx, sc, m.RS.Delete)
	}
	var ends [2]int64
	for i, v := range []any{m.RS.Add.First, m.RS.Add.Second} {
		id, temp, err := rsEnd(v)
		if err != nil {
			return r, errBadMutation.With("field", "rs.add").With("detail", err.Error())
		}
		if temp != "" {
			tb, rid, known, err := lookupTempID(ctx, tx, a.actor, m.DeviceID, temp)
			if err != nil {
				return r, err
			}
			if !known {
				return r, errTempIDUnknown.With("temp_id", temp)
			}
			if tb != m.Table {
				return r, errTempIDTable.With("temp_id", temp)
			}
			id = rid
		}
		ends[i] = id
	}
	id, err := records.AddRelation(ctx, sc, ends[0], m.RS.Add.Relation, ends[1])
	r.ID = id
	return r, err
}
