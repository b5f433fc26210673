package ops

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
)

// Plugins is the plugin host as operations see it (pluginhost.Manager):
// each loaded plugin's state, and its supervision figures.
type Plugins interface {
	States() map[string]string
	PluginStats() []PluginStat
}

// Health holds what readiness is decided from.
type Health struct {
	Apps    *apps.Registry
	Plugins Plugins // nil: no plugins
	Now     func() time.Time
	// MigrationsTTL is how long a migration check is remembered (default
	// 10 s): probes every second do not read every app every second.
	MigrationsTTL time.Duration

	mu        sync.Mutex
	checkedAt time.Time // of the last check that found nothing pending
}

// Routes are /healthz and /readyz.
func (h *Health) Routes() []api.Route {
	return []api.Route{
		{Scope: api.Root, Method: http.MethodGet, Path: "/healthz", Handler: h.healthz},
		{Scope: api.Root, Method: http.MethodGet, Path: "/readyz", Handler: h.readyz},
	}
}

// GET /healthz — the process is alive and answers.
func (h *Health) healthz(c *gin.Context) {
	api.Success(c, http.StatusOK, gin.H{"code": "alive"})
}

// GET /readyz — {ready, checks: {database, migrations, plugins}}; 503
// not_ready when any check fails.
func (h *Health) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 3*time.Second)
	defer cancel()
	checks := gin.H{}
	ready := true
	names, err := h.Apps.List(ctx)
	if err != nil {
		ready = false
		checks["database"] = gin.H{"ok": false, "detail": "the database does not answer"}
	} else {
		checks["database"] = gin.H{"ok": true, "apps": len(names)}
		pending, err := h.pendingMigrations(ctx, names)
		switch {
		case err != nil:
			ready = false
			checks["migrations"] = gin.H{"ok": false, "detail": "the migrations could not be read"}
		case len(pending) > 0:
			ready = false
			checks["migrations"] = gin.H{"ok": false, "pending": pending}
		default:
			checks["migrations"] = gin.H{"ok": true}
		}
	}
	if h.Plugins != nil {
		states := h.Plugins.States()
		waiting := []string{}
		for name, st := range states {
			if st == "disabled" || st == "stopped" {
				waiting = append(waiting, name)
			}
		}
		ok := len(waiting) == 0
		ready = ready && ok
		checks["plugins"] = gin.H{"ok": ok, "states": states, "not_running": waiting}
	}
	if !ready {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "error", "code": "not_ready", "message": "the server cannot serve yet", "ready": false, "checks": checks})
		return
	}
	api.Success(c, http.StatusOK, gin.H{"ready": true, "checks": checks})
}

// pendingMigrations names the apps with migrations to apply, remembered
// for MigrationsTTL.
func (h *Health) pendingMigrations(ctx context.Context, names []string) ([]string, error) {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	ttl := h.MigrationsTTL
	if ttl == 0 {
		ttl = 10 * time.Second
	}
	if !h.checkedAt.IsZero() && now.Sub(h.checkedAt) < ttl {
		return nil, nil
	}
	pending := []string{}
	for _, n := range names {
		a, err := h.Apps.Get(ctx, n)
		if err != nil {
			return nil, err
		}
		steps, err := a.DB.PendingMigrations(ctx)
		if err != nil {
			return nil, err
		}
		if len(steps) > 0 {
			pending = append(pending, n)
		}
	}
	if len(pending) == 0 {
		// Only a clean result is remembered: a server that was behind is
		// checked again at the next probe.
		h.checkedAt = now
	}
	return pending, nil
}

func (h *Health) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}
