package main

import (
	"context"
	"log/slog"
	"net/http"
	"slices"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/demo"
)

// Demo credentials: printed at start-up, meant for a local first look.
const (
	demoApp      = "demo"
	demoEmail    = "demo@example.org"
	demoPassword = "demo-password"
)

// ensureDemo creates and fills the demo application when the instance has
// no application at all, and returns the banner to print (with %s for the
// base URL): at every start while the demo application exists, so the way
// in is on screen each time make run starts, not only the first (issue 30);
// "" when the instance has other applications and no demo.
func ensureDemo(ctx context.Context, reg *apps.Registry, h http.Handler, log *slog.Logger) (string, error) {
	names, err := reg.List(ctx)
	if err != nil {
		return "", err
	}
	switch {
	case slices.Contains(names, demoApp):
		// Made by an earlier start: only the banner again.
	case len(names) > 0:
		return "", nil
	default:
		if err := createDemo(ctx, reg, h, log); err != nil {
			return "", err
		}
	}
	return `
Strata is running at %[1]s with a demo application "demo"
(3 sites on the map, 6 trenches, 48 stratigraphic units in a Harris matrix, 288 finds,
3 burials; dating, radiocarbon dates, a Bayesian chronology model and osteology where
their plugins run; images, a chart, a saved query and a print template).
  open %[1]s/?app=demo in a browser and sign in as ` + demoEmail + ` / ` + demoPassword + `
  or, with curl:

  TOKEN=$(curl -s -X POST %[1]s/demo/api/auth/login -H 'Content-Type: application/json' \
    -d '{"email":"` + demoEmail + `","password":"` + demoPassword + `"}' | sed 's/.*"token":"\([^"]*\)".*/\1/')
  curl -sg -H "Authorization: Bearer $TOKEN" '%[1]s/demo/api/records/finds?filter[material][_eq]=bronze&sort_field=weight&sort_dir=desc&per_page=5'

`, nil
}

// createDemo creates and fills the demo application (demo.Create: the
// data, then, through the server's handler h, what shows every feature at
// once). A plugin that is not running leaves its feature off, logged; the
// demo still starts.
func createDemo(ctx context.Context, reg *apps.Registry, h http.Handler, log *slog.Logger) error {
	shown, err := demo.Create(ctx, reg, h, demo.App{Name: demoApp, Email: demoEmail, Password: demoPassword}, log)
	if err != nil {
		return err
	}
	log.Info("demo application created", "app", demoApp, "features", shown.Features, "features_left_off", shown.Missing)
	return nil
}
