package apps

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// migrationName names a system migration to clients as its file does,
// without the extension ("0007_history").
func migrationName(m store.Migration) string { return fmt.Sprintf("%04d_%s", m.ID, m.Name) }

// PendingUpgrade names the system migrations the app has not applied yet,
// in order ([] when it is up to date). Strata applies them when it starts,
// so a list arises only when an app was created or restored meanwhile by
// an older binary sharing the storage.
func (a *App) PendingUpgrade(ctx context.Context) ([]string, error) {
	pending, err := a.DB.PendingMigrations(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(pending))
	for _, m := range pending {
		out = append(out, migrationName(m))
	}
	return out, nil
}

// UpgradeMinor applies the app's pending system migrations (BraDypUS's
// minor upgrade) and names those it applied ([] when none were pending).
// Each step runs in its own transaction; a failure leaves the steps before
// it applied and reports the error.
func (a *App) UpgradeMinor(ctx context.Context, now func() time.Time) ([]string, error) {
	applied, err := a.DB.Migrate(ctx, now)
	out := make([]string, 0, len(applied))
	for _, m := range applied {
		out = append(out, migrationName(m))
	}
	if err != nil {
		return out, fmt.Errorf("minor upgrade of %s: %w", a.Name, err)
	}
	return out, nil
}
