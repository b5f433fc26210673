package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/nodelock"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/scratch"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/version"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// cmdServe runs the HTTP server until ctx is cancelled (SIGINT/SIGTERM),
// then stops accepting, lets in-flight requests finish within the shutdown
// timeout, and closes the databases.
func cmdServe(ctx context.Context, args []string, e env) error {
	cfg, rest, err := loadConfig("serve", args, e, (*config.Config).RegisterFlags)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("serve takes no arguments, got %q", rest), "serve"}
	}
	log := newLogger(cfg, e.stderr)
	// Plugins a developer runs under a debugger (PLUGINS.md, "Debugging a
	// plugin"): a bad value stops the server rather than start without them.
	reattach, err := pluginsdk.ParseReattach(e.getenv(pluginsdk.ReattachEnv))
	if err != nil {
		return err
	}
	// A bad STRATA_GROUP_COMMIT would fail every SQLite app as it opens.
	if _, err := store.ParseGroupMode(e.getenv(store.GroupCommitEnv)); err != nil {
		return err
	}
	// The addresses are taken before anything is made: a port in use
	// stops the server in one line, before the data folder, the instance
	// key and the plugins exist. The listener is kept (not probed and
	// closed, which another program could take meanwhile); connections
	// made before the server is ready wait in its backlog.
	ln, err := listen(cfg.Addr, "STRATA_ADDR", "--addr")
	if err != nil {
		return err
	}
	defer ln.Close() // srv.Serve closes it too; this covers the returns before
	var mln net.Listener
	if cfg.MetricsAddr != "" {
		if mln, err = listen(cfg.MetricsAddr, "STRATA_METRICS_ADDR", ""); err != nil {
			return err
		}
		defer mln.Close()
	}
	if cfg.DatabaseURL == "" {
		// SQLite serves one node: a second server on this folder stops
		// here, before it opens anything (core/nodelock says why).
		lock, err := nodelock.Acquire(cfg.DataDir, "listening on "+ln.Addr().String())
		if err != nil {
			return err
		}
		defer lock.Release()
	}
	// Temporary files live under the data folder; what a killed server
	// left there (a restore's tables, password hashes in clear) goes now.
	tmp, err := scratch.Open(cfg.DataDir)
	if err != nil {
		return err
	}
	defer tmp.Close()
	reg, err := openRegistry(ctx, cfg, e, log)
	if err != nil {
		return err
	}
	defer reg.Close()
	// An app whose migration fails is logged and still served: its
	// upgrade status reports the pending step to its admins.
	if err := reg.MigrateAll(ctx); err != nil {
		log.Error("some applications could not be migrated", "err", err)
	}

	// Plugins start before the server is built: their routes are mounted
	// with the core routes. A plugin that fails is logged and left out;
	// Stop kills the processes after the HTTP server has shut down.
	plugins := pluginhost.New(pluginhost.Options{Dir: cfg.PluginDir, Apps: reg, Logger: log,
		Env: pluginhost.Environment(e.getenv, cfg.DataDir), RunDir: pluginhost.RunDir(e.getenv, cfg.DataDir),
		PingInterval: cfg.PluginPingInterval, PingTimeout: pingTimeout(cfg.PluginPingTimeout),
		Reattach: reattach})
	if err := plugins.Start(ctx); err != nil {
		log.Error("plugins not loaded", "err", err)
	}
	defer plugins.Stop()

	// The job system is opened before the server (its areas register
	// their kinds while it is built), works jobs once it is built, and
	// stops after the HTTP server: running jobs get the shutdown timeout
	// to finish.
	jobSys, err := jobs.Open(ctx, reg.Backend(), jobs.Options{Dir: cfg.DataDir, Logger: log})
	if err != nil {
		return err
	}
	jobsStopped := false
	stopJobs := func(ctx context.Context) {
		if !jobsStopped {
			jobsStopped = true
			if err := jobSys.Stop(ctx); err != nil {
				log.Error("job system stopped uncleanly", "err", err)
			}
		}
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		stopJobs(ctx)
	}()

	handler, err := server.New(server.Deps{Config: cfg, Apps: reg, Logger: log, Plugins: plugins, Jobs: jobSys, Scratch: tmp})
	if err != nil {
		return err
	}
	if err := jobSys.Start(ctx); err != nil {
		return err
	}
	// Offline mutations whose wait for their predecessor is over are
	// applied even if their device never pushes again (core/fieldsync).
	defer handler.StartSyncHolds(ctx)()
	// Each application's retention rules are applied about once a day
	// (core/retention), by a job one node queues.
	defer handler.StartRetention(ctx)()
	var demoBanner string
	if cfg.Demo {
		if demoBanner, err = ensureDemo(ctx, reg, handler, log); err != nil {
			return err
		}
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	srv.RegisterOnShutdown(jobSys.EndStreams)  // job event streams do not hold the shutdown
	srv.RegisterOnShutdown(handler.EndStreams) // nor live changes' streams (clients resume elsewhere)
	engine := "sqlite (" + cfg.DataDir + ")"
	if cfg.DatabaseURL != "" {
		engine = "postgres"
	}
	fileStore := "local (" + cfg.DataDir + "/files)"
	if cfg.S3.Bucket != "" {
		fileStore = "s3 (bucket " + cfg.S3.Bucket + ")"
	}
	log.Info("strata listening", "url", "http://"+ln.Addr().String(), "version", version.Version,
		"engine", engine, "files", fileStore, "new_app_allowed", cfg.AllowNewApp)
	if demoBanner != "" {
		fmt.Fprintf(e.stdout, demoBanner, "http://"+ln.Addr().String())
	}
	if e.ready != nil {
		e.ready(ln.Addr().String())
	}

	if mln != nil {
		// The metrics on their own listener (a port the load balancer does
		// not expose), closed with the process.
		msrv := &http.Server{Handler: handler.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = msrv.Serve(mln) }()
		defer msrv.Close()
		log.Info("metrics listening", "url", "http://"+mln.Addr().String()+"/metrics")
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("server stopped: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	stopJobs(shutdownCtx)
	log.Info("stopped")
	return nil
}

// listen takes addr, or says in one line which address could not be had
// and how to choose another (the variable and the flag, when there is
// one, that set it).
func listen(addr, envVar, flagName string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	why := err.Error()
	var se *os.SyscallError
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		why = "the address is already in use (another Strata, or another program, listens there)"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		why = "no network interface of this machine has that address"
	case errors.Is(err, syscall.EACCES):
		why = "permission denied (ports below 1024 need privileges)"
	case errors.As(err, &se):
		why = se.Err.Error()
	}
	how := envVar + "=HOST:PORT"
	if flagName != "" {
		how += " or " + flagName + " HOST:PORT"
	}
	return nil, fmt.Errorf("cannot listen on %s: %s; choose another address with %s", addr, why, how)
}

// storageFlags binds the flags of the admin commands.
func storageFlags(c *config.Config, fs *flag.FlagSet) { c.RegisterStorageFlags(fs) }

// pingTimeout is the plugin host's PingTimeout for the configured one:
// 0 (no health check) is negative there, where 0 takes the default.
func pingTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
