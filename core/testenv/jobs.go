package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
)

// NewInstanceWithJobs is NewInstance with a running job system (polling
// every few milliseconds), stopped at cleanup.
func NewInstanceWithJobs(t testing.TB, e store.Engine, opts ...func(*config.Config)) *Instance {
	t.Helper()
	return NewInstanceWithJobsDeps(t, e, server.Deps{}, opts...)
}

// NewInstanceWithJobsDeps is NewInstanceWithJobs with deps (a file store,
// a clock); deps.Apps and deps.Jobs are made here.
func NewInstanceWithJobsDeps(t testing.TB, e store.Engine, deps server.Deps, opts ...func(*config.Config)) *Instance {
	t.Helper()
	reg := NewRegistry(t, e)
	sys, err := jobs.Open(context.Background(), reg.Backend(), jobs.Options{Dir: t.TempDir(), Logger: Logger(),
		PollInterval: 10 * time.Millisecond, ProgressInterval: 20 * time.Millisecond, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = sys.Stop(ctx)
	})
	deps.Apps, deps.Jobs = reg, sys
	inst := NewInstanceWith(t, e, deps, opts...)
	if err := sys.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return inst
}
