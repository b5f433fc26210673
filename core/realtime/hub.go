// Package realtime pushes an app's changes to its users as Server-Sent
// Events (issue 31; docs/api.md "Live changes"). Every event comes from
// the app's change log (core/changes): a stream is a cursor on it, so a
// reconnecting client resumes with Last-Event-ID, on this node or another,
// and what a subscriber is shown is built through the records package's
// scope for that subscriber (records.Read, records.Matches), never a check
// of this package's own.
package realtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
)

// Config bounds the streams of a process.
type Config struct {
	// PerApp and PerUser cap the open streams of one app, and of one
	// user (or API key) of it; past them a new stream is refused with
	// 429 rate_limited.
	PerApp, PerUser int
	// Buffer is how many events may wait for a slow client; when full the
	// client gets resync and its stream ends (writers never wait for it).
	Buffer int
	// Heartbeat is the interval of the comment lines that keep proxies
	// from closing an idle stream.
	Heartbeat time.Duration
	// MaxSubscriptions caps one client's set.
	MaxSubscriptions int
	// KnownLimit caps the ids a filter subscription remembers as shown
	// (to tell update from enter, and send leave); past it, a change that
	// takes a row out sends leave even for a row the client never got.
	KnownLimit int
	// PresenceTTL is how long a presence entry lasts after its last POST
	// (clients post again every 20 s); PresencePerApp caps an app's
	// entries over all nodes (one per stream at most).
	PresenceTTL    time.Duration
	PresencePerApp int
	// Beat is how often the node refreshes its streams' rows and sweeps
	// expired presence (tests shorten it).
	Beat time.Duration
	// ReplayMaxEvents and ReplayMaxAge bound what a stream resuming with
	// Last-Event-ID replays: a client further behind (more events, or its
	// first missed change older) gets resync instead. The change log keeps
	// far more (weeks, for offline sync: STRATA_CHANGELOG_MAX_AGE), but a
	// page reloading what it shows is cheaper than replaying that much.
	ReplayMaxEvents int64
	ReplayMaxAge    time.Duration
}

// DefaultConfig is what the service runs with unless told otherwise.
var DefaultConfig = Config{PerApp: 1000, PerUser: 20, Buffer: 256, Heartbeat: 15 * time.Second, MaxSubscriptions: 100, KnownLimit: 50_000,
	PresenceTTL: 60 * time.Second, PresencePerApp: 1000, Beat: beatEvery, ReplayMaxEvents: 50_000, ReplayMaxAge: 15 * time.Minute}

// Hub holds the process's streams.
type Hub struct {
	host api.Host
	cfg  Config
	now  func() time.Time
	// pgConn is the PostgreSQL connection settings the listener of other
	// nodes' commits uses (nil on SQLite: one node).
	pgConn *pgx.ConnConfig

	// node names this process in sys_realtime_clients and in its
	// notifications (its own are handled when sent, not when heard).
	node      string
	beatEvery time.Duration

	mu       sync.Mutex
	clients  map[string]*client
	perApp   map[string]int
	perUser  map[string]int
	listen   *listener
	upkeep   *upkeep
	quit     chan struct{} // closed by EndStreams
	quitOnce sync.Once

	// presence holds the records whose viewers changed, for the upkeep
	// goroutine to tell (coalesced; at most maxPendingPresence).
	presenceMu   sync.Mutex
	presence     map[presenceKey]bool
	presenceWake chan struct{}

	shared shared // what the streams share (shared.go)
}

// EndStreams ends every open stream (no final event: a client reconnects
// with Last-Event-ID, to another node behind a load balancer); the
// process calls it when it shuts down, so that streams do not hold the
// graceful shutdown until its deadline.
func (h *Hub) EndStreams() { h.quitOnce.Do(func() { close(h.quit) }) }

// New makes a hub. pgConn, when not nil, is the PostgreSQL connection a
// listener opens while streams are open, to hear other nodes' commits.
func New(host api.Host, cfg Config, now func() time.Time, pgConn *pgx.ConnConfig) *Hub {
	d := DefaultConfig
	if cfg.PerApp <= 0 {
		cfg.PerApp = d.PerApp
	}
	if cfg.PerUser <= 0 {
		cfg.PerUser = d.PerUser
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = d.Buffer
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = d.Heartbeat
	}
	if cfg.MaxSubscriptions <= 0 {
		cfg.MaxSubscriptions = d.MaxSubscriptions
	}
	if cfg.KnownLimit <= 0 {
		cfg.KnownLimit = d.KnownLimit
	}
	if cfg.PresenceTTL <= 0 {
		cfg.PresenceTTL = d.PresenceTTL
	}
	if cfg.PresencePerApp <= 0 {
		cfg.PresencePerApp = d.PresencePerApp
	}
	if cfg.Beat <= 0 {
		cfg.Beat = d.Beat
	}
	if cfg.ReplayMaxEvents <= 0 {
		cfg.ReplayMaxEvents = d.ReplayMaxEvents
	}
	if cfg.ReplayMaxAge <= 0 {
		cfg.ReplayMaxAge = d.ReplayMaxAge
	}
	if now == nil {
		now = time.Now
	}
	return &Hub{host: host, cfg: cfg, now: now, pgConn: pgConn, node: newClientID()[:16], beatEvery: cfg.Beat,
		clients: map[string]*client{}, perApp: map[string]int{}, perUser: map[string]int{},
		presence: map[presenceKey]bool{}, presenceWake: make(chan struct{}, 1), quit: make(chan struct{})}
}

// Routes are the realtime area's.
func (h *Hub) Routes() []api.Route {
	return []api.Route{
		{Scope: api.App, Method: http.MethodPost, Path: "/realtime/token", Access: auth.Enter, Handler: h.token},
		{Scope: api.App, Method: http.MethodGet, Path: "/realtime", Access: auth.Enter, SignedLink: true, Stream: true, Handler: h.stream},
		{Scope: api.App, Method: http.MethodPost, Path: "/realtime/subscriptions", Access: auth.Enter, Handler: h.subscribe},
		{Scope: api.App, Method: http.MethodPost, Path: "/realtime/presence", Access: auth.Enter, Handler: h.presencePost},
	}
}

var (
	errRateLimited = errs.New(errs.TooManyRequests, "rate_limited", "too many live streams are open; close one and retry")
	errNoClient    = errs.New(errs.NotFound, "client_not_found",
		"no open stream of yours has this client_id: open GET /realtime first and use the client_id of its connect event")
	errSessionOnly = errs.New(errs.Invalid, "session_required", "a stream token is made for a signed-in user's session; an API key sends its key with GET /realtime")
)

// POST /realtime/token — {t, expires_in}: a short-lived signed `t` for
// GET /realtime?t=… (a browser's EventSource sends no headers): the signed
// links of file downloads (auth.SignLink), made for that path only.
func (h *Hub) token(c *gin.Context) {
	path := "/" + api.AppOf(c).Name + "/api/realtime"
	t := auth.LinkToken(c.Request.Context(), path)
	if t == "" {
		api.Fail(c, errSessionOnly)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"t": t, "expires_in": int(auth.LinkTTL.Seconds())})
}

// admit counts a new stream of app for who, or refuses it.
func (h *Hub) admit(cl *client) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.perApp[cl.app.Name] >= h.cfg.PerApp || h.perUser[cl.userKey()] >= h.cfg.PerUser {
		return errRateLimited
	}
	h.perApp[cl.app.Name]++
	h.perUser[cl.userKey()]++
	h.clients[cl.id] = cl
	if h.pgConn != nil && h.listen == nil {
		h.listen = startListener(h.pgConn, h.heard, h.resume)
	}
	if h.upkeep == nil {
		h.upkeep = h.startUpkeep()
	}
	return nil
}

// leave forgets a stream that ended.
func (h *Hub) leave(cl *client) {
	h.mu.Lock()
	delete(h.clients, cl.id)
	if h.perApp[cl.app.Name]--; h.perApp[cl.app.Name] <= 0 {
		delete(h.perApp, cl.app.Name)
	}
	if h.perUser[cl.userKey()]--; h.perUser[cl.userKey()] <= 0 {
		delete(h.perUser, cl.userKey())
	}
	var l *listener
	var u *upkeep
	if len(h.clients) == 0 {
		l, u = h.listen, h.upkeep
		h.listen, h.upkeep = nil, nil
	}
	h.mu.Unlock()
	// Stopped outside the lock: their goroutines take it.
	if l != nil {
		l.stop()
	}
	if u != nil {
		u.stop()
	}
}

// Open is how many streams the process has open (tests, metrics).
func (h *Hub) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

func (h *Hub) client(id string) *client {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.clients[id]
}

func newClientID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// lastEventID is where a reconnecting client resumes: the Last-Event-ID
// header (what EventSource sends), or last_event_id in the query.
func lastEventID(c *gin.Context) (int64, bool, error) {
	v := c.GetHeader("Last-Event-ID")
	if v == "" {
		v = c.Query("last_event_id")
	}
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false, errs.New(errs.Invalid, "invalid_parameter", "Last-Event-ID is the id of an event of this stream").With("parameter", "Last-Event-ID")
	}
	return n, true, nil
}

// background is a context for work that outlives a request.
func background() context.Context { return context.Background() }
