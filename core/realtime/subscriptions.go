package realtime

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
)

// subscription is one entry of a client's set: a table's rows matching a
// filter, or one record.
type subscription struct {
	ID     string
	Table  string
	Record int64 // 0: a filter subscription
	cond   *records.Cond
	// scope is the subscriber's scope on Table, built by the records gate
	// when the set was given: every match and read goes through it. A
	// change of the subscriber's privileges ends the stream, so it never
	// outlives them.
	scope *records.Scope
	// known are the ids the client was shown (matching when subscribed,
	// or entered since); partial: there were more than KnownLimit.
	known   map[int64]bool
	partial bool
	// shared is the scope's entry shared with the user's other
	// subscriptions on Table (shared.go); nil: scope is its own.
	shared *scopeEntry
}

type subscriptionsBody struct {
	ClientID      string `json:"client_id"`
	Subscriptions []struct {
		ID     string          `json:"id"`
		Table  string          `json:"table"`
		Filter json.RawMessage `json:"filter"`
		Record json.RawMessage `json:"record"`
	} `json:"subscriptions"`
}

var errBadSubscription = errs.New(errs.Invalid, "invalid_parameter", "a subscription is {id, table, filter} or {id, table, record}")

// POST /realtime/subscriptions — {client_id, subscriptions: [...]}
// replaces the set of the caller's stream client_id. Each table is opened
// through the records gate and each filter validated as a list validates
// it, with the list's codes; nothing changes when one is refused.
func (h *Hub) subscribe(c *gin.Context) {
	var body subscriptionsBody
	dec := json.NewDecoder(c.Request.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		api.Fail(c, errs.New(errs.Invalid, "invalid_json", "the body is not the JSON expected").With("detail", err.Error()))
		return
	}
	cl := h.client(body.ClientID)
	caller := api.ActorOf(c)
	if cl == nil || cl.app.Name != api.AppOf(c).Name || cl.actor.UserID != caller.UserID || cl.actor.KeyID != caller.KeyID {
		// Another's stream is as absent as an unknown one.
		api.Fail(c, errNoClient)
		return
	}
	if len(body.Subscriptions) > h.cfg.MaxSubscriptions {
		api.Fail(c, errBadSubscription.With("detail", "too many subscriptions").With("max", h.cfg.MaxSubscriptions))
		return
	}
	seen := map[string]bool{}
	subs := make([]*subscription, 0, len(body.Subscriptions))
	ctx := c.Request.Context()
	head, err := logHead(ctx, cl) // before any scope is built (shared.go)
	if err != nil {
		api.Fail(c, err)
		return
	}
	for i, in := range body.Subscriptions {
		if in.ID == "" || len(in.ID) > 64 || seen[in.ID] {
			api.Fail(c, errBadSubscription.With("index", i).With("detail", "each subscription has its own id (1 to 64 characters)"))
			return
		}
		seen[in.ID] = true
		// The one gate: a table the caller may not read has no scope, and
		// an unknown one is table_not_found, as for a list.
		sc, err := h.host.RecordScope(c, strings.TrimSpace(in.Table))
		if err != nil {
			api.Fail(c, err)
			return
		}
		s := &subscription{ID: in.ID, Table: sc.Table.Name, scope: sc, known: map[int64]bool{}}
		hasRecord := len(in.Record) > 0 && string(in.Record) != "null"
		hasFilter := len(in.Filter) > 0 && string(in.Filter) != "null"
		switch {
		case hasRecord && hasFilter:
			api.Fail(c, errBadSubscription.With("index", i).With("detail", "filter or record, not both"))
			return
		case hasRecord:
			var raw any
			_ = json.Unmarshal(in.Record, &raw)
			id, err := api.ParseID(raw)
			if err != nil {
				api.Fail(c, err)
				return
			}
			s.Record = id
		default:
			// The list's own validation and codes (unknown field,
			// operator, value), within the caller's reach.
			if s.cond, err = h.host.Condition(c, sc, in.Filter, ""); err != nil {
				api.Fail(c, err)
				return
			}
		}
		if err := s.loadKnown(ctx, h.cfg.KnownLimit); err != nil {
			api.Fail(c, err)
			return
		}
		if err := h.share(ctx, cl, s, head); err != nil {
			api.Fail(c, err)
			return
		}
		subs = append(subs, s)
	}
	cl.mu.Lock()
	cl.subs, cl.subscribed = subs, true
	cl.mu.Unlock()
	select {
	case cl.changed <- struct{}{}:
	default:
	}
	ids := make([]string, len(subs))
	for i, s := range subs {
		ids[i] = s.ID
	}
	api.Success(c, http.StatusOK, gin.H{"client_id": cl.id, "subscriptions": ids})
}

// filter is the subscription's condition: its filter, or its record.
func (s *subscription) filter() *records.Cond {
	if s.Record != 0 {
		return &records.Cond{SQL: s.scope.DB.Qualify(s.Table) + `."id" = ?`, Args: []any{s.Record}}
	}
	return s.cond
}

// loadKnown reads the ids the subscription shows now.
func (s *subscription) loadKnown(ctx context.Context, limit int) error {
	ids, more, err := records.MatchingIDs(ctx, s.scope, s.filter(), limit)
	if err != nil {
		return err
	}
	for _, id := range ids {
		s.known[id] = true
	}
	s.partial = more
	return nil
}

// recordEvent is the data of create, update and enter.
type recordEvent struct {
	Table         string          `json:"table"`
	ID            int64           `json:"id"`
	Record        json.RawMessage `json:"record"` // encoded once (shared.go)
	Version       int64           `json:"version"`
	UserID        *int64          `json:"user_id"`
	Actor         string          `json:"actor,omitempty"`
	At            time.Time       `json:"at"`
	Subscriptions []string        `json:"subscriptions"`
}

// goneEvent is the data of leave and delete: no field value.
type goneEvent struct {
	Table         string   `json:"table"`
	ID            int64    `json:"id"`
	Subscriptions []string `json:"subscriptions"`
}

// evaluate is what change ch shows client cl: for each subscription on
// its table, whether the row is (still) among those the subscriber's
// scope and filter give, against what it was shown before.
func (h *Hub) evaluate(ctx context.Context, cl *client, ch changes.Change) ([]frame, error) {
	switch ch.Op {
	case changes.Privilege:
		if cl.actor.KeyID == 0 && ch.RecordID == cl.actor.UserID {
			return []frame{{id: ch.ID, event: "unauthorized", data: gin.H{"code": "token_invalidated",
				"message": "your privileges or sessions changed: sign in again, then reopen the stream"}, final: true}}, nil
		}
		return nil, nil
	case changes.Schema:
		return []frame{{id: ch.ID, event: "schema", data: gin.H{"table": ch.Table}}}, nil
	}
	cl.mu.Lock()
	subs := cl.subs
	cl.mu.Unlock()
	byEvent := map[string][]string{}
	var order []string
	var sc *records.Scope
	var se *scopeEntry
	for _, s := range subs {
		if s.Table != ch.Table {
			continue
		}
		if s.Record != 0 && s.Record != ch.RecordID {
			continue
		}
		event := ""
		was := s.known[ch.RecordID] || s.partial
		if ch.Op == changes.Delete {
			if was {
				event = "delete"
			}
		} else {
			now, err := h.matches(ctx, s, ch) // records.Matches, shared.go
			if err != nil {
				return nil, err
			}
			switch {
			case now && ch.Op == changes.Create:
				event = "create"
			case now && s.known[ch.RecordID]:
				event = "update"
			case now:
				event = "enter"
			case was:
				event = "leave"
			}
			if now {
				sc, se = s.scope, s.shared
			}
		}
		switch event {
		case "":
			continue
		case "create", "update", "enter":
			s.known[ch.RecordID] = true
		default:
			delete(s.known, ch.RecordID)
		}
		if _, ok := byEvent[event]; !ok {
			order = append(order, event)
		}
		byEvent[event] = append(byEvent[event], s.ID)
	}
	if len(order) == 0 {
		return nil, nil
	}
	var rec json.RawMessage
	if sc != nil {
		// The record exactly as GET /record/{tb}/{id} answers this
		// subscriber, through their scope (records.Read, shared.go); nil
		// when deleted or moved out since the match: a later change says so.
		var err error
		if rec, err = h.read(ctx, sc, se, ch); err != nil {
			return nil, err
		}
	}
	frames := make([]frame, 0, len(order))
	for _, event := range order {
		switch event {
		case "delete", "leave":
			frames = append(frames, frame{id: ch.ID, event: event, data: goneEvent{Table: ch.Table, ID: ch.RecordID, Subscriptions: byEvent[event]}})
		default:
			if rec == nil {
				continue
			}
			ev := recordEvent{Table: ch.Table, ID: ch.RecordID, Record: rec, Version: ch.Version, Actor: ch.Actor, At: ch.At, Subscriptions: byEvent[event]}
			if ch.UserID != 0 {
				uid := ch.UserID
				ev.UserID = &uid
			}
			frames = append(frames, frame{id: ch.ID, event: event, data: ev.encode()}) // shared.go
		}
	}
	return frames, nil
}
