package fieldsync

import (
	"time"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/files"
)

// Deps are what the sync area needs from the server.
type Deps struct {
	Host api.Host
	// Files stores the bytes of uploads (upload.go).
	Files *files.Service
	// MaxUploadBytes bounds one upload, as for POST /files.
	MaxUploadBytes int64
	Now            func() time.Time
	// Hold is how long a pushed mutation waits for its predecessor before
	// it is applied anyway, marked as a conflict (STRATA_SYNC_HOLD; 0:
	// DefaultHold). hold.go.
	Hold time.Duration
}

// handlers serve the sync routes.
type handlers struct {
	Deps
}

// Routes are the sync area's: pull, push and conflicts, uploads.
func Routes(d Deps) []api.Route {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Hold <= 0 {
		d.Hold = DefaultHold
	}
	h := &handlers{Deps: d}
	var out []api.Route
	out = append(out, h.pullRoutes()...)
	out = append(out, h.pushRoutes()...)
	out = append(out, h.offlineTableRoutes()...)
	return append(out, h.uploadRoutes()...)
}
