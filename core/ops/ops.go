package ops

import (
	"database/sql"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/store"
)

// New builds the readiness checks and the metrics of a server over reg
// (its PostgreSQL pool, when it has one, is measured) and plugins (nil:
// none).
func New(reg *apps.Registry, plugins Plugins, now func() time.Time) (*Health, *Metrics) {
	var pool *sql.DB
	if reg != nil {
		if pg, ok := reg.Backend().(*store.PostgresBackend); ok {
			pool = pg.Pool()
		}
	}
	return &Health{Apps: reg, Plugins: plugins, Now: now}, NewMetrics(pool, plugins)
}
