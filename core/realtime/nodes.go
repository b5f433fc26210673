package realtime

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// Several nodes (docs/api.md "Live changes"). A stream lives on one node,
// but its client's POSTs (subscriptions, presence) may reach any node
// behind a load balancer. Each open stream therefore has a row in the
// app's sys_realtime_clients (migration 0029): who opened it and on which
// node, refreshed by a heartbeat. The node a POST reaches validates the
// set for the caller through its own request gate, as for a local stream,
// checks the row is the caller's, stores the set's JSON in the row and
// sends a NOTIFY on ControlChannel naming the client: the stream's node
// reads the set back and builds it again with scopes for its own client's
// actor (api.Host.ActorScope: the same gate, no check of ours), so what
// the stream shows is decided where it is sent. Presence entries are
// columns of the same row (one per client: bounded by the streams), and a
// change of a record's viewers is a NOTIFY naming the record. PostgreSQL's
// LISTEN/NOTIFY is the only transport (no broker); the table makes the
// state survive a lost notification: after its listener (re)connects a
// node reloads every set whose sequence moved and refreshes presence. On
// SQLite (one node) the same rows are used and the notifications are
// handed over inside the process.

// ControlChannel is the PostgreSQL channel of sets and presence:
// "<schema>|<node>|set|<client_id>" or "<schema>|<node>|presence|<record
// id>|<table>" (well below NOTIFY's 8000 bytes: names are identifiers).
const ControlChannel = "strata_realtime"

// beatEvery is how often a node refreshes its rows' heartbeat and sweeps
// expired presence; staleAfter is the age past which a row counts as its
// node's crash (a stream's node always beats well within it).
const (
	beatEvery  = 10 * time.Second
	staleAfter = 45 * time.Second
)

// clientRow is a stream's row, as another node reads it.
type clientRow struct {
	ClientID      string
	Node          string
	UserID, KeyID int64
	Name          string
}

func (h *Hub) table(db *store.DB) string { return db.Sys("realtime_clients") }

func (h *Hub) nowMS() int64 { return h.now().UnixMilli() }

// register writes cl's row before its connect event: a POST to any node
// finds it from then on.
func (h *Hub) register(ctx context.Context, cl *client) error {
	db := cl.app.DB
	var user, key any
	if cl.actor.KeyID != 0 {
		key = cl.actor.KeyID
	} else {
		user = cl.actor.UserID
	}
	_, err := db.Exec(ctx, `INSERT INTO `+h.table(db)+` (client_id, node, user_id, key_id, name, heartbeat, subs_seq) VALUES (?, ?, ?, ?, ?, ?, 0)`,
		cl.id, h.node, user, key, cl.actor.Name, h.nowMS())
	return err
}

// unregister deletes cl's row when its stream ends; its presence, if any,
// goes with it, and the record's other viewers are told.
func (h *Hub) unregister(cl *client) {
	ctx, cancel := context.WithTimeout(background(), 10*time.Second)
	defer cancel()
	db := cl.app.DB
	var tb *string
	var rec *int64
	_ = db.QueryRow(ctx, `SELECT tb, record_id FROM `+h.table(db)+` WHERE client_id = ?`, cl.id).Scan(&tb, &rec)
	if _, err := db.Exec(ctx, `DELETE FROM `+h.table(db)+` WHERE client_id = ?`, cl.id); err != nil {
		return // the row expires by its heartbeat
	}
	if tb != nil && rec != nil {
		h.presenceChanged(ctx, db, *tb, *rec)
	}
}

// callerClient is the open stream client_id of the caller (same app,
// same user or API key), on this node (local) or, through its row, on
// another (row). Another's stream is as absent as an unknown one.
func (h *Hub) callerClient(c *gin.Context, id string) (local *client, row *clientRow, err error) {
	a, caller := api.AppOf(c), api.ActorOf(c)
	if cl := h.client(id); cl != nil {
		if cl.app.Name == a.Name && cl.actor.UserID == caller.UserID && cl.actor.KeyID == caller.KeyID {
			return cl, nil, nil
		}
		return nil, nil, errNoClient
	}
	if id == "" || len(id) > 64 {
		return nil, nil, errNoClient
	}
	r := &clientRow{ClientID: id}
	var user, key *int64
	err = a.DB.QueryRow(c.Request.Context(), `SELECT node, user_id, key_id, name FROM `+h.table(a.DB)+` WHERE client_id = ? AND heartbeat >= ?`,
		id, h.nowMS()-staleAfter.Milliseconds()).Scan(&r.Node, &user, &key, &r.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, errNoClient
	}
	if err != nil {
		return nil, nil, err
	}
	if user != nil {
		r.UserID = *user
	}
	if key != nil {
		r.KeyID = *key
	}
	if r.UserID != caller.UserID || r.KeyID != caller.KeyID || r.Node == h.node {
		// This node's row without its client: the stream just ended.
		return nil, nil, errNoClient
	}
	return nil, r, nil
}

// storeSet hands a validated set to the stream's node: the set's JSON in
// the client's row, then a notification naming the client.
func (h *Hub) storeSet(ctx context.Context, db *store.DB, clientID string, set json.RawMessage) error {
	res, err := db.Exec(ctx, `UPDATE `+h.table(db)+` SET subs = ?, subs_seq = subs_seq + 1 WHERE client_id = ?`, string(set), clientID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNoClient
	}
	return h.notify(ctx, db, "set|"+clientID)
}

// notify sends msg to the other nodes (PostgreSQL), and handles it here.
func (h *Hub) notify(ctx context.Context, db *store.DB, msg string) error {
	h.control(db.Key(), msg)
	if db.Engine != store.Postgres {
		return nil
	}
	_, err := db.Exec(ctx, `SELECT pg_notify('`+ControlChannel+`', ?)`, db.Schema()+"|"+h.node+"|"+msg)
	return err
}

// heard is a ControlChannel notification; this node's own were handled
// when sent.
func (h *Hub) heard(payload string) {
	parts := strings.SplitN(payload, "|", 3)
	if len(parts) != 3 || parts[1] == h.node {
		return
	}
	h.control("pg:"+parts[0], parts[2])
}

// control acts on a message for the app whose DB key is key: a set for
// one of this node's clients, or a record whose viewers changed.
func (h *Hub) control(key, msg string) {
	kind, rest, _ := strings.Cut(msg, "|")
	switch kind {
	case "set":
		cl := h.client(rest)
		if cl == nil || cl.app.DB.Key() != key {
			return
		}
		go h.reloadSet(cl)
	case "presence":
		idText, table, ok := strings.Cut(rest, "|")
		id, err := strconv.ParseInt(idText, 10, 64)
		if ok && err == nil {
			h.queuePresence(key, table, id)
		}
	}
}

// reloadSet applies the set another node stored for cl, if newer than
// the one it has, with cl's own scopes. A set that no longer builds here
// (a table deleted in between, a privilege lowered) keeps the old set
// and tells the client with an error event.
func (h *Hub) reloadSet(cl *client) {
	cl.setMu.Lock()
	defer cl.setMu.Unlock()
	ctx, cancel := context.WithTimeout(background(), 30*time.Second)
	defer cancel()
	db := cl.app.DB
	var raw *string
	var seq int64
	if err := db.QueryRow(ctx, `SELECT subs, subs_seq FROM `+h.table(db)+` WHERE client_id = ?`, cl.id).Scan(&raw, &seq); err != nil || raw == nil || seq <= cl.setSeq {
		return
	}
	var in []subscriptionIn
	if err := json.Unmarshal([]byte(*raw), &in); err != nil {
		return
	}
	head, err := logHead(ctx, cl) // before any scope is built (shared.go)
	if err != nil {
		return
	}
	subs, err := h.build(ctx, in, func(table string, filter json.RawMessage) (*subscription, error) {
		sc, cond, err := h.host.ActorScope(ctx, cl.app, &cl.actor, table, filter)
		if err != nil {
			return nil, err
		}
		return &subscription{Table: sc.Table.Name, scope: sc, cond: cond, known: map[int64]bool{}}, nil
	})
	cl.setSeq = seq
	if err == nil {
		err = h.shareSet(ctx, cl, subs, head)
	}
	if err != nil {
		data := gin.H{"code": "internal_error", "message": "the subscriptions could not be applied"}
		if e, ok := errs.As(err); ok && e.Kind != errs.Internal {
			data = gin.H{"code": e.Code, "message": e.Message}
		}
		cl.send(frame{event: "error", data: data})
		return
	}
	cl.apply(subs)
}

// beat is one round of a node's upkeep for the apps it has streams of:
// its rows' heartbeat; presence entries past their time and rows of
// crashed nodes cleared, with their records' viewers told.
func (h *Hub) beat(ctx context.Context) {
	now := h.nowMS()
	for _, db := range h.appDBs() {
		t := h.table(db)
		_, _ = db.Exec(ctx, `UPDATE `+t+` SET heartbeat = ? WHERE node = ?`, now, h.node)
		dead, expired := now-staleAfter.Milliseconds(), now-h.cfg.PresenceTTL.Milliseconds()
		gone, err := h.presenceRecords(ctx, db, `tb IS NOT NULL AND (seen_at < ? OR heartbeat < ?)`, expired, dead)
		if err != nil {
			continue
		}
		_, _ = db.Exec(ctx, `UPDATE `+t+` SET tb = NULL, record_id = NULL, field = NULL, seen_at = NULL WHERE tb IS NOT NULL AND (seen_at < ? OR heartbeat < ?)`, expired, dead)
		_, _ = db.Exec(ctx, `DELETE FROM `+t+` WHERE heartbeat < ?`, dead)
		for _, r := range gone {
			h.presenceChanged(ctx, db, r.table, r.id)
		}
	}
}

// resume is what a node does after its listener (re)connected: a set or
// a presence change notified while it was not listening is in the table.
func (h *Hub) resume() {
	ctx, cancel := context.WithTimeout(background(), 30*time.Second)
	defer cancel()
	h.mu.Lock()
	cls := make([]*client, 0, len(h.clients))
	for _, cl := range h.clients {
		cls = append(cls, cl)
	}
	h.mu.Unlock()
	for _, cl := range cls {
		h.reloadSet(cl)
	}
	for _, db := range h.appDBs() {
		open, err := h.presenceRecords(ctx, db, `tb IS NOT NULL AND seen_at >= ?`, h.nowMS()-h.cfg.PresenceTTL.Milliseconds())
		if err != nil {
			continue
		}
		for _, r := range open {
			h.queuePresence(db.Key(), r.table, r.id)
		}
	}
}

// appDBs are the databases of the apps this node has streams of.
func (h *Hub) appDBs() []*store.DB {
	h.mu.Lock()
	defer h.mu.Unlock()
	seen := map[string]bool{}
	var out []*store.DB
	for _, cl := range h.clients {
		if k := cl.app.DB.Key(); !seen[k] {
			seen[k] = true
			out = append(out, cl.app.DB)
		}
	}
	return out
}

type recordRef struct {
	table string
	id    int64
}

// presenceRecords are the records of the rows where applies.
func (h *Hub) presenceRecords(ctx context.Context, db *store.DB, where string, args ...any) ([]recordRef, error) {
	rows, err := db.Query(ctx, `SELECT DISTINCT tb, record_id FROM `+h.table(db)+` WHERE `+where+` LIMIT ?`, append(args, h.cfg.PresencePerApp)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []recordRef
	for rows.Next() {
		var r recordRef
		if err := rows.Scan(&r.table, &r.id); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// upkeep runs beat while the node has streams.
type upkeep struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (h *Hub) startUpkeep() *upkeep {
	ctx, cancel := context.WithCancel(background())
	u := &upkeep{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(u.done)
		t := time.NewTicker(h.beatEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				h.beat(ctx)
			case <-h.presenceWake:
				h.drainPresence(ctx)
			}
		}
	}()
	return u
}

func (u *upkeep) stop() {
	u.cancel()
	<-u.done
}
