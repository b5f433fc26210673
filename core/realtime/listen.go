package realtime

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-archaeo/strata/core/changes"
)

// listener hears, on a connection of its own, the notifications every
// node's commits send (changes.NotifyChannel, "<schema>:<id>") and wakes
// this process's streams of that app, which then read the log: a write on
// another node reaches them. It runs while the process has streams open.
//
// The same connection hears ControlChannel (sets and presence given on
// other nodes: heard); after each (re)connection resumed reads what a
// lost notification would have said from sys_realtime_clients.
type listener struct {
	cancel  context.CancelFunc
	done    chan struct{}
	heard   func(payload string)
	resumed func()
}

// missedWakeEvery is how often, in nanoseconds, the listener wakes every
// stream without a notification (30 s; tests set it shorter).
var missedWakeEvery atomic.Int64

func init() { missedWakeEvery.Store(int64(30 * time.Second)) }

func startListener(cfg *pgx.ConnConfig, heard func(string), resumed func()) *listener {
	ctx, cancel := context.WithCancel(background())
	l := &listener{cancel: cancel, done: make(chan struct{}), heard: heard, resumed: resumed}
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
	for _, ch := range []string{changes.NotifyChannel, ControlChannel} {
		if _, err := conn.Exec(ctx, `LISTEN `+ch); err != nil {
			return err
		}
	}
	changes.WakeAll()
	go l.resumed()
	// A node that died between a commit and its notification (sent after
	// the commit: changes/notify.go) told no one: the streams read the log
	// every missedWakeEvery anyway, so such a change reaches them within
	// that time even when the app has no next one.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(time.Duration(missedWakeEvery.Load()))
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				changes.WakeAll()
			}
		}
	}()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Channel == ControlChannel {
			l.heard(n.Payload)
			continue
		}
		schema, _, ok := strings.Cut(n.Payload, ":")
		if ok {
			changes.Wake("pg:" + schema)
		}
	}
}
