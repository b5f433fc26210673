package demo

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
)

// App names the demo application to create and its admin; Definition is
// the application's name shown to people ("Demo excavation" when empty).
type App struct {
	Name, Definition, Email, Password string
}

// Create creates the demo application as `make run` shows it: the data
// (Seed, Small), then everything else through the server's handler h
// (Showcase). When a step fails the application is dropped, so nothing
// half-filled is left and the next start tries again.
func Create(ctx context.Context, reg *apps.Registry, h http.Handler, a App, log *slog.Logger) (Shown, error) {
	if a.Definition == "" {
		a.Definition = "Demo excavation"
	}
	app, err := reg.Create(ctx, apps.CreateParams{Name: a.Name, Definition: a.Definition, Email: a.Email,
		Password: a.Password, AdminName: "Demo Admin"})
	if err != nil {
		return Shown{}, fmt.Errorf("create demo app: %w", err)
	}
	now := time.Now().UTC()
	err = Seed(ctx, app, Small, 1, now)
	var shown Shown
	if err == nil {
		shown, err = Showcase(ctx, h, app, a.Email, now, log)
	}
	if err != nil {
		_ = reg.Drop(ctx, a.Name)
		return Shown{}, fmt.Errorf("fill demo app: %w", err)
	}
	return shown, nil
}
