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
	ClientID      string           `json:"client_id"`
	Subscriptions []subscriptionIn `json:"subscriptions"`
}

// subscriptionIn is one entry of a set as given: what a POST validated
// is stored as it is for the stream's node to build again.
type subscriptionIn struct {
	ID     string          `json:"id"`
	Table  string          `json:"table"`
	Filter json.RawMessage `json:"filter,omitempty"`
	Record json.RawMessage `json:"record,omitempty"`
}

var errBadSubscription = errs.New(errs.Invalid, "invalid_parameter", "a subscription is {id, table, filter} or {id, table, record}")

// POST /realtime/subscriptions — {client_id, subscriptions: [...]}
// replaces the set of the caller's stream client_id, on this node or
// another. Each table is opened through the records gate and each filter
// validated as a list validates it, with the list's codes; nothing
// changes when one is refused.
func (h *Hub) subscribe(c *gin.Context) {
	var body subscriptionsBody
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		api.Fail(c, errs.New(errs.Invalid, "invalid_json", "the body is not the JSON expected").With("detail", err.Error()))
		return
	}
	local, row, err := h.callerClient(c, body.ClientID)
	if err != nil {
		api.Fail(c, err)
		return
	}
	ctx := c.Request.Context()
	var head int64
	if local != nil {
		// Read before any scope is built: a shared scope is offered only
		// while no access change came after it (shared.go).
		if head, err = logHead(ctx, local); err != nil {
			api.Fail(c, err)
			return
		}
	}
	// Validated here for the caller, with the request's gate and codes,
	// wherever the stream is.
	subs, err := h.build(ctx, body.Subscriptions, func(table string, filter json.RawMessage) (*subscription, error) {
		sc, err := h.host.RecordScope(c, table)
		if err != nil {
			return nil, err
		}
		s := &subscription{Table: sc.Table.Name, scope: sc, known: map[int64]bool{}}
		if filter != nil {
			if s.cond, err = h.host.Condition(c, sc, filter, ""); err != nil {
				return nil, err
			}
		}
		return s, nil
	})
	if err != nil {
		api.Fail(c, err)
		return
	}
	if local != nil {
		// A set stored earlier through another node and not applied yet
		// must not replace this later one: its sequence is passed.
		local.setMu.Lock()
		var seq int64
		db := local.app.DB
		if err := db.QueryRow(ctx, `SELECT subs_seq FROM `+h.table(db)+` WHERE client_id = ?`, local.id).Scan(&seq); err == nil {
			local.setSeq = max(local.setSeq, seq)
		}
		if err := h.shareSet(ctx, local, subs, head); err != nil {
			local.setMu.Unlock()
			api.Fail(c, err)
			return
		}
		local.apply(subs)
		local.setMu.Unlock()
	} else {
		// The stream's node builds the set again for its own client
		// (reloadSet): the scopes made here are the caller's on this
		// request, and the stream's events are decided where it is.
		set, _ := json.Marshal(body.Subscriptions)
		if err := h.storeSet(ctx, api.AppOf(c).DB, row.ClientID, set); err != nil {
			api.Fail(c, err)
			return
		}
	}
	ids := make([]string, len(subs))
	for i, s := range subs {
		ids[i] = s.ID
	}
	api.Success(c, http.StatusOK, gin.H{"client_id": body.ClientID, "subscriptions": ids})
}

// maxBody bounds the JSON bodies of the realtime routes.
const maxBody = 1 << 20

// build checks a set's entries and makes each with mk (the scope on its
// table and, for a filter subscription, its condition; filter is nil for
// a record subscription, empty for every row), then reads what each
// shows now.
func (h *Hub) build(ctx context.Context, in []subscriptionIn, mk func(table string, filter json.RawMessage) (*subscription, error)) ([]*subscription, error) {
	if len(in) > h.cfg.MaxSubscriptions {
		return nil, errBadSubscription.With("detail", "too many subscriptions").With("max", h.cfg.MaxSubscriptions)
	}
	seen := map[string]bool{}
	subs := make([]*subscription, 0, len(in))
	for i, e := range in {
		if e.ID == "" || len(e.ID) > 64 || seen[e.ID] {
			return nil, errBadSubscription.With("index", i).With("detail", "each subscription has its own id (1 to 64 characters)")
		}
		seen[e.ID] = true
		hasRecord := len(e.Record) > 0 && string(e.Record) != "null"
		hasFilter := len(e.Filter) > 0 && string(e.Filter) != "null"
		if hasRecord && hasFilter {
			return nil, errBadSubscription.With("index", i).With("detail", "filter or record, not both")
		}
		var id int64
		filter := json.RawMessage{}
		if hasRecord {
			var raw any
			_ = json.Unmarshal(e.Record, &raw)
			var err error
			if id, err = api.ParseID(raw); err != nil {
				return nil, err
			}
			filter = nil
		} else if hasFilter {
			filter = e.Filter
		}
		// The one gate: a table the caller may not read has no scope, and
		// an unknown one is table_not_found, as for a list; a filter gets
		// the list's own validation and codes, within the caller's reach.
		s, err := mk(strings.TrimSpace(e.Table), filter)
		if err != nil {
			return nil, err
		}
		s.ID, s.Record = e.ID, id
		if id != 0 {
			s.cond = nil
		}
		if err := s.loadKnown(ctx, h.cfg.KnownLimit); err != nil {
			return nil, err
		}
		subs = append(subs, s)
	}
	return subs, nil
}

// shareSet gives each subscription of a set applied to the local stream
// cl the shared scope of its user and table (shared.go); head is the log's
// newest id read before the set's scopes were built.
func (h *Hub) shareSet(ctx context.Context, cl *client, subs []*subscription, head int64) error {
	for _, s := range subs {
		if err := h.share(ctx, cl, s, head); err != nil {
			return err
		}
	}
	return nil
}

// apply makes subs cl's set and wakes its pump.
func (cl *client) apply(subs []*subscription) {
	cl.mu.Lock()
	cl.subs, cl.subscribed = subs, true
	cl.mu.Unlock()
	select {
	case cl.changed <- struct{}{}:
	default:
	}
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
		// A user's change ends that user's streams; an API key's
		// (Table changes.KeyTable) that key's.
		mine := cl.actor.KeyID == 0 && ch.Table == "" && ch.RecordID == cl.actor.UserID
		if ch.Table == changes.KeyTable {
			mine = cl.actor.KeyID != 0 && ch.RecordID == cl.actor.KeyID
		}
		if mine {
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
