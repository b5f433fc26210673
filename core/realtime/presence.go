package realtime

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
)

// Presence (docs/api.md "Live changes"): who else has a record open, and
// which field they are editing. An entry is the columns tb, record_id,
// field, seen_at of the client's row in sys_realtime_clients (so one per
// stream, on any node); a change of a record's viewers is a notification
// naming the record, and each node tells its own streams that have the
// record open, each through its subscriber's scope. Presence is
// ephemeral: no event id, never replayed, not in the change log.

var (
	errPresenceFull = errs.New(errs.TooManyRequests, "rate_limited", "too many people are shown as viewing records of this application; retry later")
	errBadPresence  = errs.New(errs.Invalid, "invalid_json", "the body is not the JSON expected")
	// A body's field the caller cannot see is a bad request (400), as the
	// wire says, not a missing resource.
	errNoField = errs.New(errs.Invalid, "field_not_found", "the record has no field of this name that you can see")
)

// maxPendingPresence bounds the records waiting to be told.
const maxPendingPresence = 10_000

// scopeTTL is how long a client's cached scope on a table serves presence
// events (a privilege change ends the stream anyway; the catalog may
// change under it).
const scopeTTL = 10 * time.Second

type presenceKey struct {
	key, table string
	id         int64
}

// viewer is one entry of a presence event.
type viewer struct {
	UserID *int64 `json:"user_id"`
	KeyID  int64  `json:"key_id,omitempty"`
	Name   string `json:"name"`
	Field  string `json:"field,omitempty"`
}

type presenceEvent struct {
	Table   string   `json:"table"`
	ID      int64    `json:"id"`
	Viewers []viewer `json:"viewers"`
}

// viewerRow is a presence entry as stored.
type viewerRow struct {
	clientID      string
	userID, keyID int64
	name, field   string
}

type presenceBody struct {
	ClientID string          `json:"client_id"`
	Table    *string         `json:"table"`
	Record   json.RawMessage `json:"record"`
	Field    *string         `json:"field"`
}

// POST /realtime/presence — {client_id, table, record, field?}: the
// caller's stream views that record (and edits field); table or record
// null: nothing. Answers the record's other viewers as the caller may
// see them.
func (h *Hub) presencePost(c *gin.Context) {
	var body presenceBody
	// Keys it does not know are ignored (a client may send more of its
	// form's state); a body past 64 KiB is refused.
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, 64<<10))
	if err := dec.Decode(&body); err != nil {
		api.Fail(c, errBadPresence.With("detail", err.Error()))
		return
	}
	ctx := c.Request.Context()
	viewing := body.Table != nil && strings.TrimSpace(*body.Table) != "" && len(body.Record) > 0 && string(body.Record) != "null"
	var sc *records.Scope
	var id int64
	var field any
	if viewing {
		// The one gate first, whoever's client_id it is: the list's codes
		// for a table the caller may not read, 404 for a record outside
		// their rows, 400 for a field they cannot see.
		var err error
		if sc, err = h.host.RecordScope(c, strings.TrimSpace(*body.Table)); err != nil {
			api.Fail(c, err)
			return
		}
		var raw any
		_ = json.Unmarshal(body.Record, &raw)
		if id, err = api.ParseID(raw); err != nil {
			api.Fail(c, err)
			return
		}
		if ok, err := records.Matches(ctx, sc, id, nil); err != nil || !ok {
			if err == nil {
				err = records.ErrRecordNotFound.With("table", sc.Table.Name).With("id", id)
			}
			api.Fail(c, err)
			return
		}
		if body.Field != nil && *body.Field != "" {
			if !fieldVisible(ctx, sc, *body.Field) {
				name := *body.Field
				if len(name) > 64 {
					name = name[:64] + "…"
				}
				api.Fail(c, errNoField.With("field", name))
				return
			}
			field = *body.Field
		}
	}
	if _, _, err := h.callerClient(c, body.ClientID); err != nil {
		api.Fail(c, err)
		return
	}
	db := api.AppOf(c).DB
	t := h.table(db)
	now := h.nowMS()
	expired := now - h.cfg.PresenceTTL.Milliseconds()
	var prevTable, prevField *string
	var prevID, prevSeen *int64
	err := db.QueryRow(ctx, `SELECT tb, record_id, field, seen_at FROM `+t+` WHERE client_id = ?`, body.ClientID).Scan(&prevTable, &prevID, &prevField, &prevSeen)
	if errors.Is(err, sql.ErrNoRows) {
		api.Fail(c, errNoClient) // the stream just ended
		return
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	hadEntry := prevTable != nil && prevID != nil && prevSeen != nil && *prevSeen >= expired
	if !viewing {
		if _, err := db.Exec(ctx, `UPDATE `+t+` SET tb = NULL, record_id = NULL, field = NULL, seen_at = NULL WHERE client_id = ?`, body.ClientID); err != nil {
			api.Fail(c, err)
			return
		}
		if hadEntry {
			h.presenceChanged(ctx, db, *prevTable, *prevID)
		}
		api.Success(c, http.StatusOK, gin.H{"viewers": []viewer{}})
		return
	}
	if !hadEntry {
		var n int
		if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+t+` WHERE tb IS NOT NULL AND seen_at >= ? AND client_id <> ?`, expired, body.ClientID).Scan(&n); err != nil {
			api.Fail(c, err)
			return
		}
		if n >= h.cfg.PresencePerApp {
			api.Fail(c, errPresenceFull)
			return
		}
	}
	if _, err := db.Exec(ctx, `UPDATE `+t+` SET tb = ?, record_id = ?, field = ?, seen_at = ? WHERE client_id = ?`, sc.Table.Name, id, field, now, body.ClientID); err != nil {
		api.Fail(c, err)
		return
	}
	same := hadEntry && *prevTable == sc.Table.Name && *prevID == id &&
		((prevField == nil && field == nil) || (prevField != nil && field != nil && *prevField == field.(string)))
	if !same {
		// A re-post that changes nothing tells nobody.
		if hadEntry && (*prevTable != sc.Table.Name || *prevID != id) {
			h.presenceChanged(ctx, db, *prevTable, *prevID)
		}
		h.presenceChanged(ctx, db, sc.Table.Name, id)
	}
	rows, err := h.viewersOf(ctx, db, sc.Table.Name, id)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"viewers": viewersFor(ctx, sc, rows, body.ClientID)})
}

// fieldVisible reports whether name is a field sc shows: a field of its
// table in the scope's catalog, or a plugin table of it (a section) the
// scope may read.
func fieldVisible(ctx context.Context, sc *records.Scope, name string) bool {
	for _, f := range sc.Table.Fields {
		if f.Name == name {
			return true
		}
	}
	for _, pt := range sc.Catalog.PluginTables(sc.Table.Name) {
		if pt.Name != name {
			continue
		}
		if sc.Access == nil {
			return true
		}
		acc, err := sc.Access(ctx, pt)
		return err == nil && acc.Readable()
	}
	return false
}

// viewersFor is rows as the holder of sc sees them, without client self:
// a field it cannot see is left out.
func viewersFor(ctx context.Context, sc *records.Scope, rows []viewerRow, self string) []viewer {
	out := make([]viewer, 0, len(rows))
	for _, r := range rows {
		if r.clientID == self {
			continue
		}
		v := viewer{KeyID: r.keyID, Name: r.name}
		if r.userID != 0 {
			uid := r.userID
			v.UserID = &uid
		}
		if r.field != "" && fieldVisible(ctx, sc, r.field) {
			v.Field = r.field
		}
		out = append(out, v)
	}
	return out
}

// viewersOf reads a record's current presence entries (of live streams).
func (h *Hub) viewersOf(ctx context.Context, db *store.DB, table string, id int64) ([]viewerRow, error) {
	now := h.nowMS()
	rows, err := db.Query(ctx, `SELECT client_id, user_id, key_id, name, field FROM `+h.table(db)+
		` WHERE tb = ? AND record_id = ? AND seen_at >= ? AND heartbeat >= ? ORDER BY name, client_id LIMIT ?`,
		table, id, now-h.cfg.PresenceTTL.Milliseconds(), now-staleAfter.Milliseconds(), h.cfg.PresencePerApp)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []viewerRow
	for rows.Next() {
		var r viewerRow
		var user, key *int64
		var field *string
		if err := rows.Scan(&r.clientID, &user, &key, &r.name, &field); err != nil {
			return nil, err
		}
		if user != nil {
			r.userID = *user
		}
		if key != nil {
			r.keyID = *key
		}
		if field != nil {
			r.field = *field
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// presenceChanged tells every node that the record's viewers changed.
func (h *Hub) presenceChanged(ctx context.Context, db *store.DB, table string, id int64) {
	_ = h.notify(ctx, db, "presence|"+strconv.FormatInt(id, 10)+"|"+table)
}

// queuePresence notes a record whose viewers changed, for the upkeep
// goroutine (never waiting: the record is already pending, or the queue
// is full and the next change or sweep tells it).
func (h *Hub) queuePresence(key, table string, id int64) {
	h.presenceMu.Lock()
	if len(h.presence) < maxPendingPresence {
		h.presence[presenceKey{key, table, id}] = true
	}
	h.presenceMu.Unlock()
	select {
	case h.presenceWake <- struct{}{}:
	default:
	}
}

// drainPresence tells the pending records' viewers.
func (h *Hub) drainPresence(ctx context.Context) {
	h.presenceMu.Lock()
	pending := h.presence
	h.presence = map[presenceKey]bool{}
	h.presenceMu.Unlock()
	for k := range pending {
		if ctx.Err() != nil {
			return
		}
		h.tellPresence(ctx, k)
	}
}

// tellPresence sends a presence event to each of this node's streams of
// the app that has the record open (its own entry, or a record
// subscription) and may read it through its scope.
func (h *Hub) tellPresence(ctx context.Context, k presenceKey) {
	h.mu.Lock()
	var cands []*client
	for _, cl := range h.clients {
		if cl.app.DB.Key() == k.key {
			cands = append(cands, cl)
		}
	}
	h.mu.Unlock()
	if len(cands) == 0 {
		return
	}
	rows, err := h.viewersOf(ctx, cands[0].app.DB, k.table, k.id)
	if err != nil {
		return
	}
	viewing := map[string]bool{}
	for _, r := range rows {
		viewing[r.clientID] = true
	}
	for _, cl := range cands {
		if !viewing[cl.id] && !cl.subscribedTo(k.table, k.id) {
			continue
		}
		sc, err := h.scopeOf(ctx, cl, k.table)
		if err != nil {
			continue // the table is not (or no longer) theirs to read
		}
		if ok, err := records.Matches(ctx, sc, k.id, nil); err != nil || !ok {
			continue
		}
		cl.send(frame{event: "presence", data: presenceEvent{Table: k.table, ID: k.id, Viewers: viewersFor(ctx, sc, rows, cl.id)}})
	}
}

// subscribedTo reports whether cl has a record subscription on the record.
func (cl *client) subscribedTo(table string, id int64) bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for _, s := range cl.subs {
		if s.Record == id && s.Table == table {
			return true
		}
	}
	return false
}

type cachedScope struct {
	sc *records.Scope
	at time.Time
}

// scopeOf is cl's scope on table, built by the host's gate for the
// stream's actor, kept a few seconds.
func (h *Hub) scopeOf(ctx context.Context, cl *client, table string) (*records.Scope, error) {
	cl.mu.Lock()
	cs, ok := cl.scopes[table]
	cl.mu.Unlock()
	if ok && time.Since(cs.at) < scopeTTL {
		return cs.sc, nil
	}
	sc, _, err := h.host.ActorScope(ctx, cl.app, &cl.actor, table, nil)
	if err != nil {
		return nil, err
	}
	cl.mu.Lock()
	if cl.scopes == nil {
		cl.scopes = map[string]cachedScope{}
	}
	cl.scopes[table] = cachedScope{sc: sc, at: time.Now()}
	cl.mu.Unlock()
	return sc, nil
}
