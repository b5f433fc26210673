package fieldsync

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
)

// DefaultHold is how long a mutation waits for its predecessor when
// STRATA_SYNC_HOLD is not set.
const DefaultHold = 10 * time.Minute

// MaxHeld bounds the mutations one device may have waiting: past it the
// device is answered sync_too_many_held (it is missing a mutation it must
// send first) and nothing more of it is stored.
const MaxHeld = 1000

// sweepBatch bounds the held mutations one sweep applies, so that a push
// never carries much of another device's upkeep.
const sweepBatch = 200

var (
	errTooManyHeld = errs.New(errs.Conflict, "sync_too_many_held",
		fmt.Sprintf("this device has %d mutations waiting for an earlier one: send the missing mutation (see GET /sync/devices/{device_id})", MaxHeld))
	errSeqTaken = errs.New(errs.Conflict, "sync_seq_taken", "another mutation of this device is waiting with that seq")
	errBusy     = errs.New(errs.Conflict, "sync_busy", "the device's mutations are being applied by another request: send them again")
)

// holdBack stores m to wait for its predecessor. stored false: a mutation
// of that id appeared meanwhile (read it again).
func (a *applier) holdBack(ctx context.Context, m *mutation) (result, bool, error) {
	n, err := heldCount(ctx, a.db, a.actor, m.DeviceID)
	if err != nil {
		return result{}, false, err
	}
	// Refusals here are not stored: the device sends the mutation again
	// once it has sent what was missing.
	if n >= MaxHeld {
		r, _ := refused(m, errTooManyHeld.With("max", MaxHeld))
		return r, true, nil
	}
	if taken, err := heldSeqTaken(ctx, a.db, a.actor, m.DeviceID, m.Seq); err != nil || taken {
		r, _ := refused(m, errSeqTaken.With("seq", m.Seq))
		return r, err == nil, err
	}
	stored, err := holdMutation(ctx, a.db, a.actor, m, a.now().UnixMilli())
	if err != nil || !stored {
		return result{}, false, err
	}
	return heldResult(m), true, nil
}

// ApplyExpiredHolds applies the held mutations of app whose wait is over
// (Deps.Hold), with those of their device before them, in seq order, and
// then the ones that follow: each as the account that pushed it, marked
// as a conflict (the order it was made in is not known to be kept). At
// most limit devices per call; it answers how many mutations it applied.
// A push runs it; the server runs it on a timer too, so a device that
// never comes back does not leave its mutations waiting for ever. Several
// nodes may run it at once: a mutation is claimed in the transaction of
// its save (claimHeld), so none is applied twice.
func (d Deps) ApplyExpiredHolds(ctx context.Context, app *apps.App, limit int) (int, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Hold <= 0 {
		d.Hold = DefaultHold
	}
	h := &handlers{Deps: d}
	return h.applyExpired(ctx, app, limit)
}

func (h *handlers) applyExpired(ctx context.Context, app *apps.App, limit int) (int, error) {
	db := app.DB
	cutoff := h.Now().Add(-h.Hold).UnixMilli()
	rows, err := db.Query(ctx, `SELECT actor, device_id, MAX(seq) FROM `+db.Sys("sync_mutations")+
		` WHERE state = ? AND received_at <= ? GROUP BY actor, device_id ORDER BY actor, device_id LIMIT ?`, stateHeld, cutoff, limit)
	if err != nil {
		return 0, fmt.Errorf("read expired sync holds: %w", err)
	}
	type due struct {
		actor, device string
		upTo          int64
	}
	var list []due
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.actor, &d.device, &d.upTo); err != nil {
			rows.Close()
			return 0, err
		}
		list = append(list, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	applied := 0
	for _, d := range list {
		a, err := h.applierFor(ctx, app, d.actor)
		if err != nil {
			return applied, err
		}
		held, err := heldUpTo(ctx, db, d.actor, d.device, d.upTo, MaxHeld)
		if err != nil {
			return applied, err
		}
		for _, sm := range held {
			m, err := decodeMutation(sm.Body)
			if err != nil {
				return applied, err
			}
			last, err := lastSeq(ctx, db, d.actor, d.device)
			if err != nil {
				return applied, err
			}
			how := unheld
			switch {
			case sm.Seq == last+1:
				how = inOrder
			case sm.Seq <= last:
				how = late
			}
			_, ok, err := a.apply(ctx, m, true, how)
			if err != nil {
				return applied, err
			}
			if ok {
				applied++
			}
		}
		if err := a.drain(ctx, d.device); err != nil {
			return applied, err
		}
	}
	return applied, nil
}

// applierFor applies mutations of the pusher named by an actor key
// outside a request: the records gate on the account (or API key) as it
// is now. An account since deleted, or a key revoked, is refused each
// mutation (its scope fails), which still ends its wait.
func (h *handlers) applierFor(ctx context.Context, app *apps.App, key string) (*applier, error) {
	kind, idText, _ := strings.Cut(key, ":")
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("sync actor %q: %w", key, err)
	}
	a := &applier{db: app.DB, actor: key, now: h.Now, hold: h.Hold}
	switch kind {
	case "user":
		a.who = &auth.Actor{UserID: id}
		a.scope = func(ctx context.Context, table string) (*records.Scope, error) {
			sc, err := h.Host.ScopeFor(ctx, app, id, table)
			if err != nil && !isRefusal(err) {
				return nil, auth.ErrNotEnoughPrivilege.Wrap(err)
			}
			return sc, err
		}
	default:
		a.who = &auth.Actor{KeyID: id}
		a.scope = func(ctx context.Context, table string) (*records.Scope, error) {
			actor, err := keyActor(ctx, app, id)
			if err != nil {
				return nil, err
			}
			sc, _, err := h.Host.ActorScope(ctx, app, actor, table, nil)
			return sc, err
		}
	}
	return a, nil
}

// keyActor is API key id as an actor, or forbidden once it is revoked.
func keyActor(ctx context.Context, app *apps.App, id int64) (*auth.Actor, error) {
	keys, err := auth.ListAPIKeys(ctx, app.DB)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.ID == id && k.Active() {
			return &auth.Actor{KeyID: k.ID, Name: k.Label, Privilege: k.Privilege}, nil
		}
	}
	return nil, auth.ErrNotEnoughPrivilege
}

// isRefusal reports whether err is an answer (a code for the client)
// rather than a failure.
func isRefusal(err error) bool {
	e, ok := errs.As(err)
	return ok && e.Kind != errs.Internal
}
