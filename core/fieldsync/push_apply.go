package fieldsync

import (
	"context"
	"errors"
	"time"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Statuses of a mutation's answer (docs/sync.md).
const (
	statusApplied  = "applied"
	statusConflict = "conflict"
	statusHeld     = "held"
	statusRefused  = "refused"
)

// result is one mutation's answer, stored with it once done so that the
// same mutation_id answers it again, unchanged.
type result struct {
	MutationID string  `json:"mutation_id"`
	Status     string  `json:"status"`
	Table      string  `json:"table"`
	ID         int64   `json:"id,omitempty"`
	TempID     string  `json:"temp_id,omitempty"`
	Version    *int64  `json:"version,omitempty"`
	Conflicts  []int64 `json:"conflicts,omitempty"`
	Code       string  `json:"code,omitempty"`
	Message    string  `json:"message,omitempty"`
	Fields     any     `json:"fields,omitempty"`
	// Path and PathText are a refused relation's cycle (rs_cycle), as
	// POST /record/{tb}/rs gives them.
	Path     any    `json:"path,omitempty"`
	PathText string `json:"path_text,omitempty"`
}

var (
	errTempIDUnknown = errs.New(errs.Invalid, "sync_temp_id_unknown",
		"no record was created by this device with that temp_id (push its creation first)")
	errTempIDTable = errs.New(errs.Invalid, "sync_temp_id_table", "that temp_id names a record of another table")
	// errNotClaimed: another request or node took the mutation, or moved
	// its device, between our read and our transaction; read again.
	errNotClaimed = errors.New("sync mutation taken by another request")
)

// staleAttempts bounds how often an update is merged again because the
// record changed between its read and its save.
const staleAttempts = 5

// order says how a mutation stands in its device's sequence when applied.
type order int

const (
	inOrder order = iota // seq follows the device's last applied one
	late                 // seq at or below it: arrived after its successors were applied
	unheld               // held, applied without its predecessor: the hold expired
)

// applier applies mutations for one pusher (actor key) on one app.
type applier struct {
	db    *store.DB
	actor string // actorKey
	who   *auth.Actor
	// scope is the pusher's records scope on a table: the request's gate
	// (Host.RecordScope) or, outside a request, the same gate on the
	// account (hold.go).
	scope func(ctx context.Context, table string) (*records.Scope, error)
	now   func() time.Time
	// known are the devices whose row this applier has made sure of:
	// once per device and push, not once per mutation.
	known map[string]bool
}

// apply applies m in its own transaction: it is claimed (stored as done,
// or turned from held to done), its device's sequence moved, its change
// made through the save, and its answer stored, or none of it. ok false:
// someone else claimed it (errNotClaimed is not returned).
func (a *applier) apply(ctx context.Context, m *mutation, wasHeld bool, how order) (r result, ok bool, err error) {
	sc, scopeErr := a.scope(ctx, m.Table)
	err = a.db.Tx(ctx, func(tx *store.DB) error {
		now := a.now().UnixMilli()
		var claimed bool
		var err error
		if wasHeld {
			claimed, err = claimHeld(ctx, tx, a.actor, m.MutationID, now)
		} else {
			claimed, err = claimNew(ctx, tx, a.actor, m, now)
		}
		if err != nil {
			return err
		}
		if !claimed {
			return errNotClaimed
		}
		switch how {
		case inOrder:
			moved, err := advanceDevice(ctx, tx, a.actor, m.DeviceID, m.Seq, now)
			if err != nil {
				return err
			}
			if !moved {
				return errNotClaimed
			}
		case unheld:
			if err := skipDevice(ctx, tx, a.actor, m.DeviceID, m.Seq, now); err != nil {
				return err
			}
		}
		// A savepoint: a refused change (a rule, a unique value) is undone
		// with what it queued for the commit (its change-log entry), and
		// leaves the transaction usable to store the refusal and the
		// sequence.
		err = tx.Savepoint(ctx, "sync_mutation", func() error {
			if scopeErr != nil {
				return scopeErr
			}
			ts := *sc
			ts.DB = tx
			var err error
			r, err = a.change(ctx, tx, &ts, m)
			return err
		})
		if err != nil {
			if errors.Is(err, store.ErrSavepoint) {
				return err
			}
			refusal, ok := refused(m, err)
			if !ok {
				return err
			}
			r = refusal
		}
		if how != inOrder && r.Status != statusRefused {
			id, err := insertConflict(ctx, tx, a.orderConflict(m, r, how, now))
			if err != nil {
				return err
			}
			r.Status, r.Conflicts = statusConflict, append(r.Conflicts, id)
		}
		return finish(ctx, tx, a.actor, m.MutationID, r)
	})
	if errors.Is(err, errNotClaimed) {
		return result{}, false, nil
	}
	if err != nil {
		return result{}, false, err
	}
	return r, true, nil
}

// change makes m's change through the records package, as the pusher.
func (a *applier) change(ctx context.Context, tx *store.DB, sc *records.Scope, m *mutation) (result, error) {
	if m.RS != nil {
		return a.relation(ctx, tx, sc, m)
	}
	r := result{MutationID: m.MutationID, Status: statusApplied, Table: m.Table, TempID: m.TempID}
	set, err := a.resolveRefs(ctx, tx, m)
	if err != nil {
		return r, err
	}
	id := m.ID
	if id == 0 && m.TempID != "" {
		tb, rid, known, err := lookupTempID(ctx, tx, a.actor, m.DeviceID, m.TempID)
		if err != nil {
			return r, err
		}
		if known && tb != m.Table {
			return r, errTempIDTable.With("temp_id", m.TempID)
		}
		id = rid
	}
	r.ID = id
	switch {
	case m.Delete:
		if id == 0 {
			return r, records.ErrRecordNotFound
		}
		return r, a.remove(ctx, sc, id)
	case id == 0:
		in, err := records.SaveInputOf(map[string]any{"core": set, "plugins": m.Plugins}, 0)
		if err != nil {
			return r, decodeErr(err)
		}
		res, err := records.SaveVersioned(ctx, sc, in)
		if err != nil {
			return r, err
		}
		r.ID, r.Version = res.ID, &res.Version
		if m.TempID != "" {
			if err := rememberTempID(ctx, tx, a.actor, m.DeviceID, m.TempID, m.Table, res.ID, a.now().UnixMilli()); err != nil {
				return r, err
			}
		}
		return r, nil
	}
	return a.update(ctx, tx, sc, m, id, set, r)
}

// update merges m's set against the record's state at its base version
// (records.Merge3): fields only the device changed are saved, conditional
// on the version read (read again and merged again when the record moved
// in between); fields both changed keep the server's value and become
// conflicts.
func (a *applier) update(ctx context.Context, tx *store.DB, sc *records.Scope, m *mutation, id int64, set map[string]any, r result) (result, error) {
	for attempt := 1; ; attempt++ {
		cur, err := records.RecordVersion(ctx, sc, id)
		if err != nil {
			return r, err
		}
		theirs, err := records.StateAt(ctx, sc, id, cur)
		if err != nil {
			return r, err
		}
		base, baseGone := theirs, false
		if m.BaseVersion != nil {
			// A base that retention pruned (core/retention) is not
			// replaced by a later state: every differing field conflicts.
			base, err = records.BaseAt(ctx, sc, id, *m.BaseVersion)
			if baseGone = errors.Is(err, records.ErrBaseGone); baseGone {
				base, err = theirs, nil
			}
			if err != nil {
				return r, err
			}
		}
		merged := records.Merge3(records.MergeInput{Base: base.Core, Mine: set, Theirs: theirs.Core, Types: fieldTypes(sc), BaseUnknown: baseGone})
		version := cur
		if len(merged.Write) > 0 || len(m.Plugins) > 0 {
			in, err := records.SaveInputOf(map[string]any{"core": merged.Write, "plugins": m.Plugins}, id)
			if err != nil {
				return r, decodeErr(err)
			}
			in.IfVersion = []int64{cur}
			res, err := records.SaveVersioned(ctx, sc, in)
			if errors.Is(err, records.ErrStale) && attempt < staleAttempts {
				continue
			}
			if err != nil {
				return r, err
			}
			version = res.Version
		}
		r.Version = &version
		for _, c := range merged.Conflicts {
			cid, err := insertConflict(ctx, tx, a.fieldConflict(m, sc.Table.Name, id, c))
			if err != nil {
				return r, err
			}
			r.Conflicts = append(r.Conflicts, cid)
		}
		if len(r.Conflicts) > 0 {
			r.Status = statusConflict
		}
		return r, nil
	}
}

// remove deletes record id as the pusher: a row the caller cannot see
// answers as a missing one.
func (a *applier) remove(ctx context.Context, sc *records.Scope, id int64) error {
	res, err := records.Delete(ctx, sc, []int64{id})
	if err != nil {
		return err
	}
	switch {
	case len(res.Denied) > 0:
		return records.ErrNotEnough.With("reason", "not_your_record")
	case len(res.Deleted) == 0:
		return records.ErrRecordNotFound
	}
	return nil
}

// resolveRefs turns the values {"temp_id": "t"} of m's set into the ids
// of the records this device created as t.
func (a *applier) resolveRefs(ctx context.Context, tx *store.DB, m *mutation) (map[string]any, error) {
	out := make(map[string]any, len(m.Set))
	for f, v := range m.Set {
		ref, isRef := v.(map[string]any)
		if !isRef {
			out[f] = v
			continue
		}
		t, err := tempRef(ref)
		if err != nil {
			return nil, errBadMutation.With("field", f).With("detail", err.Error())
		}
		_, id, known, err := lookupTempID(ctx, tx, a.actor, m.DeviceID, t)
		if err != nil {
			return nil, err
		}
		if !known {
			return nil, errTempIDUnknown.With("field", f).With("temp_id", t)
		}
		out[f] = id
	}
	return out, nil
}

// refused is the answer of a mutation the save (or the gate) refused:
// its code, message and field errors. ok false for a failure that is not
// the mutation's (the database, a bug): the push fails and nothing of the
// mutation is stored, so that the device sends it again.
func refused(m *mutation, err error) (result, bool) {
	e, ok := errs.As(err)
	if !ok {
		return result{}, false
	}
	switch e.Kind {
	case errs.Internal, errs.Unavailable, errs.Timeout, errs.BadGateway, errs.ClientTimeout:
		return result{}, false
	}
	// No id: a refusal repeats nothing of the row (the device knows its
	// mutation by mutation_id), so it cannot echo an id as if it existed.
	r := result{MutationID: m.MutationID, Status: statusRefused, Table: m.Table, TempID: m.TempID,
		Code: e.Code, Message: e.Message}
	if fes, ok := e.Extra["errors"]; ok {
		r.Fields = fes
	}
	if p, ok := e.Extra["path"]; ok {
		r.Path = p
		r.PathText, _ = e.Extra["path_text"].(string)
	}
	return r, true
}

// fieldTypes are the column types of sc's table, for the merge.
func fieldTypes(sc *records.Scope) map[string]schema.DBType {
	out := make(map[string]schema.DBType, len(sc.Table.Fields))
	for _, f := range sc.Table.Fields {
		out[f.Name] = f.DBType
	}
	return out
}

// decodeErr is a save body's shape error as the API answers it.
func decodeErr(err error) error { return api.DecodeErr(err) }
