package fieldsync

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
)

func (h *handlers) pushRoutes() []api.Route {
	return []api.Route{
		{Scope: api.App, Method: http.MethodPost, Path: "/sync/push", Access: auth.Enter, Handler: h.handlePush},
		{Scope: api.App, Method: http.MethodGet, Path: "/sync/conflicts", Access: auth.Enter, Handler: h.handleConflicts},
		{Scope: api.App, Method: http.MethodPost, Path: "/sync/conflicts/:id/resolve", Access: auth.Enter, Handler: h.handleResolve},
		{Scope: api.App, Method: http.MethodGet, Path: "/sync/devices/:device_id", Access: auth.Enter, Handler: h.handleDevice},
	}
}

// POST /sync/push — a device's mutations, each applied once, in its
// device's order, in its own transaction, as the caller (docs/sync.md).
func (h *handlers) handlePush(c *gin.Context) {
	var body pushBody
	if err := api.BindExact(c, &body); err != nil {
		api.Fail(c, err)
		return
	}
	if len(body.Mutations) > MaxMutations {
		api.Fail(c, errTooManyMutations.With("max", MaxMutations).With("got", len(body.Mutations)))
		return
	}
	for i := range body.Mutations {
		if err := body.Mutations[i].check(i); err != nil {
			api.Fail(c, err)
			return
		}
	}
	ctx, app := c.Request.Context(), api.AppOf(c)
	// Upkeep first, whoever pushes: mutations of any device whose wait
	// is over are applied (hold.go), answers past their retention go.
	if _, err := h.applyExpired(ctx, app, sweepBatch); err != nil {
		api.Fail(c, err)
		return
	}
	if err := trimResults(ctx, app.DB, h.Now()); err != nil {
		api.Fail(c, err)
		return
	}
	actor := api.ActorOf(c)
	a := &applier{db: app.DB, actor: actorKey(actor), who: actor, now: h.Now, hold: h.Hold,
		scope: func(_ context.Context, table string) (*records.Scope, error) { return h.Host.RecordScope(c, table) }}
	results := make([]result, len(body.Mutations))
	for i := range body.Mutations {
		r, err := a.push(ctx, &body.Mutations[i])
		if err != nil {
			api.Fail(c, err)
			return
		}
		results[i] = r
	}
	// A mutation held earlier in this push may have been applied by a
	// later one (its predecessor): it answers what was done.
	for i, r := range results {
		if r.Status != statusHeld {
			continue
		}
		if sm, ok, err := findMutation(ctx, app.DB, a.actor, r.MutationID); err != nil {
			api.Fail(c, err)
			return
		} else if ok && sm.State == stateDone {
			if results[i], err = sm.storedResult(); err != nil {
				api.Fail(c, err)
				return
			}
		}
	}
	tempIDs := map[string]any{}
	for _, r := range results {
		if r.TempID != "" && r.ID != 0 && r.Status != statusRefused {
			tempIDs[r.TempID] = r.ID
		}
	}
	api.Success(c, http.StatusOK, gin.H{"results": results, "temp_ids": tempIDs})
}

// push places one mutation: its stored answer when it was received
// before; applied when it follows its device's last one (then the
// mutations it was holding up follow); held when its predecessor has not
// arrived; applied and marked when it arrives after its successors.
func (a *applier) push(ctx context.Context, m *mutation) (result, error) {
	// A few rounds: each lost race (another request claimed the mutation
	// or moved the device) is read again; the answer is then stored.
	for range 3 {
		sm, seen, err := findMutation(ctx, a.db, a.actor, m.MutationID)
		if err != nil {
			return result{}, err
		}
		if seen {
			if sm.State == stateHeld {
				return heldResult(m), nil
			}
			return sm.storedResult()
		}
		if err := ensureDevice(ctx, a.db, a.actor, m.DeviceID, a.now().UnixMilli()); err != nil {
			return result{}, err
		}
		last, err := lastSeq(ctx, a.db, a.actor, m.DeviceID)
		if err != nil {
			return result{}, err
		}
		if m.Seq > last+1 {
			r, stored, err := a.holdBack(ctx, m)
			if err != nil || stored {
				return r, err
			}
			continue
		}
		how := inOrder
		if m.Seq <= last {
			how = late
		}
		r, ok, err := a.apply(ctx, m, false, how)
		if err != nil {
			return result{}, err
		}
		if !ok {
			continue
		}
		if how == inOrder {
			if err := a.drain(ctx, m.DeviceID); err != nil {
				return result{}, err
			}
		}
		return r, nil
	}
	return result{}, errBusy
}

// heldResult is the answer of a mutation waiting for its predecessor.
func heldResult(m *mutation) result {
	return result{MutationID: m.MutationID, Status: statusHeld, Table: m.Table, ID: m.ID, TempID: m.TempID}
}

// drain applies, in order, the device's held mutations that now follow
// its last applied one.
func (a *applier) drain(ctx context.Context, device string) error {
	for range MaxHeld + 1 {
		last, err := lastSeq(ctx, a.db, a.actor, device)
		if err != nil {
			return err
		}
		next, err := heldUpTo(ctx, a.db, a.actor, device, last+1, 1)
		if err != nil || len(next) == 0 {
			return err
		}
		m, err := decodeMutation(next[0].Body)
		if err != nil {
			return err
		}
		// One left behind (its successors were applied when their wait
		// ran out) is applied now, marked, so it does not block the rest.
		how := inOrder
		if next[0].Seq <= last {
			how = late
		}
		if _, _, err := a.apply(ctx, m, true, how); err != nil {
			return err
		}
	}
	return nil
}
