package realtime

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-archaeo/strata/core/changes"
)

// listener hears, on a connection of its own, the notifications every
// node's commits send (changes.NotifyChannel, "<schema>:<id>") and wakes
// this process's streams of that app, which then read the log: a write on
// another node reaches them. It runs while the process has streams open.
type listener struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startListener(cfg *pgx.ConnConfig) *listener {
	ctx, cancel := context.WithCancel(background())
	l := &listener{cancel: cancel, done: make(chan struct{})}
	go l.run(ctx, cfg)
	return l
}

func (l *listener) stop() {
	l.cancel()
	<-l.done
}

// run listens until stopped, connecting again after a failure. After each
// (re)connection every stream is woken: what was committed while the
// connection was down is in the log.
func (l *listener) run(ctx context.Context, cfg *pgx.ConnConfig) {
	defer close(l.done)
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		if err := l.listenOnce(ctx, cfg); err != nil && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
			wait = min(wait*2, 5*time.Second)
			continue
		}
		wait = 100 * time.Millisecond
	}
}

func (l *listener) listenOnce(ctx context.Context, cfg *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+changes.NotifyChannel); err != nil {
		return err
	}
	changes.WakeAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		schema, _, ok := strings.Cut(n.Payload, ":")
		if ok {
			changes.Wake("pg:" + schema)
		}
	}
}
