package realtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/changes"
)

// client is one open stream.
type client struct {
	id    string
	app   *apps.App
	actor auth.Actor

	mu         sync.Mutex
	subs       []*subscription
	subscribed bool          // a set was given: the cursor moves
	changed    chan struct{} // the set changed (cap 1)

	out      chan frame    // events for the writer (cap Config.Buffer)
	overflow chan struct{} // closed when out was full: resync and end
	once     sync.Once

	// setMu orders the sets other nodes stored (reloadSet); setSeq is
	// the sequence of the last one applied.
	setMu  sync.Mutex
	setSeq int64
	// scopes are the client's scopes by table for presence events
	// (guarded by mu; dropped on a schema change, bounded by the
	// catalog's tables).
	scopes map[string]cachedScope
}

// frame is one event as sent.
type frame struct {
	id    int64 // 0: no id line (connect)
	event string
	data  any
	final bool // the stream ends after it
}

func (cl *client) userKey() string {
	if cl.actor.KeyID != 0 {
		return cl.app.Name + "\x00key:" + strconv.FormatInt(cl.actor.KeyID, 10)
	}
	return cl.app.Name + "\x00user:" + strconv.FormatInt(cl.actor.UserID, 10)
}

// send queues f for the writer without ever waiting: a client whose
// buffer is full is dropped (overflow), so that a slow reader holds up
// nobody, writers least of all.
func (cl *client) send(f frame) bool {
	select {
	case cl.out <- f:
		return true
	default:
		cl.once.Do(func() { close(cl.overflow) })
		return false
	}
}

// GET /realtime — the app's changes as Server-Sent Events (docs/api.md
// "Live changes").
func (h *Hub) stream(c *gin.Context) {
	after, resume, err := lastEventID(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	a := api.AppOf(c)
	cl := &client{id: newClientID(), app: a, actor: *api.ActorOf(c), changed: make(chan struct{}, 1),
		out: make(chan frame, h.cfg.Buffer+2), overflow: make(chan struct{})} // +2: connect and resync, queued before the pump starts
	if err := h.admit(cl); err != nil {
		api.Fail(c, err)
		return
	}
	// After leave: what its subscriptions shared (shared.go).
	defer h.release(cl)
	defer h.leave(cl)
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	if err := h.register(ctx, cl); err != nil {
		api.Fail(c, err)
		return
	}
	defer h.unregister(cl)
	// Watch before reading the head: a commit in between wakes the pump.
	wake, stop := changes.Watch(a.DB.Key())
	defer stop()
	oldest, newest, err := changes.Bounds(ctx, a.DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	behind := false
	if resume {
		if behind, err = h.behindReplay(ctx, a.DB, after, oldest, newest); err != nil {
			api.Fail(c, err)
			return
		}
	}
	w := c.Writer
	// A stream has no body, so the server gives it no read deadline
	// (core/server limitBody); one would end it STRATA_BODY_TIMEOUT after
	// it opened (TestStreamOutlivesTheBodyTimeout).
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	cursor := newest
	cl.out <- frame{event: "connect", data: gin.H{"client_id": cl.id}}
	if resume {
		if behind {
			// Past the window: the client reloads what it shows.
			cl.out <- frame{id: newest, event: "resync", data: gin.H{"reason": "window"}}
		} else {
			cursor = after
		}
	}
	go h.pump(ctx, cl, wake, cursor)
	beat := time.NewTicker(h.cfg.Heartbeat)
	defer beat.Stop()
	for {
		// A dropped client gets its resync before anything still queued.
		select {
		case <-cl.overflow:
			writeFrame(w, frame{id: 0, event: "resync", data: gin.H{"reason": "slow_consumer"}})
			return
		default:
		}
		select {
		case <-ctx.Done():
			return
		case <-h.quit:
			return
		case <-cl.overflow:
			writeFrame(w, frame{id: 0, event: "resync", data: gin.H{"reason": "slow_consumer"}})
			return
		case f := <-cl.out:
			if writeQueued(w, cl, f) { // with the frames queued behind it (shared.go)
				return
			}
		case <-beat.C:
			if _, err := io.WriteString(w, ": heartbeat\n\n"); err != nil {
				return
			}
			w.Flush()
		}
	}
}

// writeFrame writes one event and flushes it.
func writeFrame(w gin.ResponseWriter, f frame) error {
	err := encodeFrame(w, f)
	w.Flush()
	return err
}

// encodeFrame writes one event, unflushed; data already encoded
// (shared.go) is written as it is.
func encodeFrame(w io.Writer, f frame) error {
	data, ok := f.data.(encoded)
	if !ok {
		var err error
		if data, err = json.Marshal(f.data); err != nil {
			return err
		}
	}
	var err error
	if f.id > 0 {
		_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", f.id, f.event, data)
	} else {
		_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", f.event, data)
	}
	return err
}

// readBatch is how many log rows the pump reads at a time.
const readBatch = 200

// pump moves cl's cursor along the log once it has a subscription set,
// and queues the events each change gives it.
func (h *Hub) pump(ctx context.Context, cl *client, wake <-chan struct{}, cursor int64) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-cl.overflow:
			return
		case <-wake:
		case <-cl.changed:
		}
		cl.mu.Lock()
		subscribed := cl.subscribed
		cl.mu.Unlock()
		if !subscribed {
			// The cursor waits for the set: events between the connection
			// and the first set are given once it arrives.
			continue
		}
		for {
			batch, err := h.since(ctx, cl.app.DB, cursor, readBatch) // changes.Since, shared.go
			if err != nil {
				if ctx.Err() == nil {
					cl.send(frame{event: "error", data: gin.H{"code": "internal_error", "message": "the change log could not be read"}, final: true})
				}
				return
			}
			for _, ch := range batch {
				frames, err := h.evaluate(ctx, cl, ch)
				if err != nil {
					if ctx.Err() == nil {
						cl.send(frame{event: "error", data: gin.H{"code": "internal_error", "message": "a change could not be read"}, final: true})
					}
					return
				}
				for _, f := range frames {
					if !cl.send(f) || f.final {
						return
					}
				}
				cursor = ch.ID
			}
			if len(batch) < readBatch {
				break
			}
		}
	}
}
