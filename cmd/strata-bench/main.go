// Command strata-bench is a load benchmark for a running Strata server (either
// engine) or, for comparison, a running PocketBase server. It starts nothing:
// it creates an application (or signs in to one), creates the table `finds`
// (title, material with an index, weight, context), seeds it to each size
// asked for through the batch API and, at each size, runs every operation for
// a fixed time with a number of concurrent clients, then prints req/s, p50,
// p99 and errors per operation.
//
//	strata-bench -url http://127.0.0.1:8090 -rows 10000,100000
//	strata-bench -pocketbase http://127.0.0.1:8091 -email a@example.org -password ... -rows 10000
//
// With -sync it measures offline sync's pull instead (sync.go, make
// bench-sync): the first pull of the table in rows/s with the server's peak
// memory, and incremental pulls after 100 changes.
//
// With -realtime it measures live changes instead (realtime.go): streams
// of Server-Sent Events under a writer at a fixed rate, the delivery
// latency of their events and the write rate with and without them, and
// the server's goroutines and memory from its metrics (make bench-realtime).
//
//	strata-bench -url http://127.0.0.1:8090 -realtime -metrics http://127.0.0.1:9090/metrics -rows 10000 -subscribers 500 -rate 200 -duration 30s
//
// Run `strata-bench -h` for every flag; docs/performance.md for the method
// and the numbers.
package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const usage = `strata-bench: load benchmark for a running Strata (or PocketBase) server.

Usage:
  strata-bench -url URL [flags]            measure Strata at URL
  strata-bench -pocketbase URL [flags]     measure PocketBase at URL

It starts no server. Against Strata it creates the application -app through
POST /api/new-app (the server needs SERVICE_ALLOW_NEW_APP=1) or, if the app
exists, signs in to it with -email and -password (a super_admin). Against
PocketBase it signs in as the superuser -email/-password (create one first:
pocketbase superuser upsert EMAIL PASS) and enables the batch API.

It then creates the table -table (fields title, material, weight, context;
an index on material), refusing a table that already holds rows, and for each
size in -rows, in increasing order: seeds the table up to that many rows in
batches of -batch through the batch API, and runs each operation for
-duration with -clients concurrent clients (after -warmup):

  list-eq      list where material equals a value, 30 a page, with total
  list-sort    list sorted by weight descending, page 50 of 30, with total
  list-substr  list where title contains a word, case-insensitive, with total
  read         read one record by id (random among the seeded ids)
  update       update one field (weight) of a random record
  create       create one record (the records created are deleted afterwards,
               so the table holds exactly the size measured)

It prints a table per size, and appends to -csv when given:
target,rows,operation,requests,errors,seconds,req_per_s,p50_ms,p99_ms.

With -realtime it measures live changes (GET /realtime, Server-Sent Events)
instead: it seeds the table to the first size of -rows, runs a writer at
-rate writes/s (half creates, half updates; open loop) for -duration with no
stream open, then opens -subscribers streams (real clients, spread over
-users accounts, each subscribed to material = one of -filters values) and
runs the writer again. It prints the write rate and latency with and
without subscribers, the delivery latency of the events (arrival minus the
write's answer) p50/p95/p99, events missed, and the server's goroutines and
memory (read from -metrics) at rest, with streams open, at the peak, and
after the clients left. The server's STRATA_REALTIME_PER_APP and
STRATA_REALTIME_PER_USER must admit the streams. -csv rows: rt-write-alone,
rt-write-with, rt-delivery (the rows column holds the subscribers).

With -sync it measures offline sync's pull (GET /sync/{tb}) instead: it
seeds the table to the first size of -rows (-sync-step seed or all), then
(-sync-step pull or all) pulls the whole table page after page of
-sync-limit rows, timed (rows/s), sampling the server's resident memory
from -metrics (peak), and -sync-rounds times changes -sync-changes records
and times one incremental pull, which must answer exactly those. -csv
rows: sync-first-pull (with the peak RSS in MiB as a 10th column),
sync-incremental-<n> (median and max ms). make bench-sync runs it.

Flags:
`

type options struct {
	url, pocketbase   string
	app, email, pass  string
	table             string
	rows              []int
	clients           int
	duration, warmup  time.Duration
	batch, seedConc   int
	ops               []string
	label, csvPath    string
	seed              uint64
	requestTimeout    time.Duration
	deleteAfterCreate bool
	realtime          bool
	rt                rtOptions
	syncMode          bool
	sync              syncOptions
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	hc := &http.Client{
		Timeout: o.requestTimeout,
		Transport: &http.Transport{
			MaxIdleConns:        max(o.clients, o.rt.writers) * 2,
			MaxIdleConnsPerHost: max(o.clients, o.rt.writers) * 2,
			IdleConnTimeout:     90 * time.Second,
		},
	}
	var t target
	if o.pocketbase != "" {
		t = &pocketbase{base: strings.TrimRight(o.pocketbase, "/"), hc: hc, table: o.table}
	} else {
		t = &strata{base: strings.TrimRight(o.url, "/"), hc: hc, app: o.app, table: o.table}
	}
	if st, ok := t.(*strata); ok && o.syncMode && o.sync.step == "pull" {
		// The table was seeded by an earlier run (-sync-step seed).
		if err := st.signIn(ctx, o.email, o.pass); err != nil {
			return fmt.Errorf("sign in: %w", err)
		}
	} else if err := t.setup(ctx, o.email, o.pass); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	label := o.label
	if label == "" {
		label = t.label()
	}
	if o.syncMode || o.realtime {
		// The Strata-only modes: one target, their own CSV rows.
		st, ok := t.(*strata)
		if !ok {
			return errors.New("-sync and -realtime measure Strata only (-url)")
		}
		fmt.Fprintf(stdout, "target %s, table %s, client cores %d\n", label, o.table, runtime.NumCPU())
		var csvw *csv.Writer
		if o.csvPath != "" {
			f, err := os.OpenFile(o.csvPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			csvw = csv.NewWriter(f)
			defer csvw.Flush()
		}
		if o.syncMode {
			return runSync(ctx, o, st, stdout, csvw)
		}
		return runRealtime(ctx, o, st, stdout, stderr, csvw)
	}
	fmt.Fprintf(stdout, "target %s, table %s, %d clients, %s per operation (warm-up %s), client cores %d\n",
		label, o.table, o.clients, o.duration, o.warmup, runtime.NumCPU())

	var csvw *csv.Writer
	if o.csvPath != "" {
		f, err := os.OpenFile(o.csvPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		csvw = csv.NewWriter(f)
		defer csvw.Flush()
	}

	gen := newGenerator(o.seed)
	var ids []string
	for _, n := range o.rows {
		have := len(ids)
		if n > have {
			start := time.Now()
			added, err := seed(ctx, t, gen, have, n-have, o.batch, o.seedConc)
			ids = append(ids, added...)
			if err != nil {
				return fmt.Errorf("seeding to %d rows: %w", n, err)
			}
			el := time.Since(start)
			fmt.Fprintf(stdout, "\nseeded %d rows (to %d) in %.1f s: %.0f rows/s\n", n-have, n, el.Seconds(), float64(n-have)/el.Seconds())
			if csvw != nil {
				csvw.Write([]string{label, strconv.Itoa(n), "seed", strconv.Itoa(n - have), "0",
					fmt.Sprintf("%.2f", el.Seconds()), fmt.Sprintf("%.1f", float64(n-have)/el.Seconds()), "", ""})
				csvw.Flush()
			}
		}
		total, err := t.count(ctx)
		if err != nil {
			return fmt.Errorf("counting: %w", err)
		}
		fmt.Fprintf(stdout, "\n%s, %d rows (the table counts %d)\n", label, n, total)
		fmt.Fprintf(stdout, "%-12s %10s %9s %9s %8s %8s\n", "operation", "req/s", "p50 ms", "p99 ms", "requests", "errors")
		for _, name := range o.ops {
			op, ok := t.op(name)
			if !ok {
				return fmt.Errorf("unknown operation %q", name)
			}
			var created *idSink
			if name == "create" {
				created = &idSink{}
			}
			env := opEnv{ids: ids, gen: gen, created: created}
			if o.warmup > 0 {
				load(ctx, o.clients, o.warmup, env, op, o.seed+1)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r := load(ctx, o.clients, o.duration, env, op, o.seed+2)
			fmt.Fprintf(stdout, "%-12s %10.1f %9.2f %9.2f %8d %8d\n", name, r.rate(), ms(r.pct(50)), ms(r.pct(99)), len(r.lat), r.errors)
			if r.firstErr != nil {
				fmt.Fprintf(stderr, "  %s: first error: %v\n", name, r.firstErr)
			}
			if csvw != nil {
				csvw.Write([]string{label, strconv.Itoa(n), name, strconv.Itoa(len(r.lat)), strconv.Itoa(r.errors),
					fmt.Sprintf("%.2f", r.elapsed.Seconds()), fmt.Sprintf("%.1f", r.rate()),
					fmt.Sprintf("%.2f", ms(r.pct(50))), fmt.Sprintf("%.2f", ms(r.pct(99)))})
				csvw.Flush()
			}
			if created != nil && o.deleteAfterCreate {
				if err := deleteAll(ctx, t, created.all(), o.batch); err != nil {
					return fmt.Errorf("deleting the records created: %w", err)
				}
			}
		}
	}
	return nil
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("strata-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.url, "url", "", "base URL of a running Strata server, e.g. http://127.0.0.1:8090")
	fs.StringVar(&o.pocketbase, "pocketbase", "", "base URL of a running PocketBase server instead of Strata")
	fs.StringVar(&o.app, "app", "bench", "Strata application to create or use")
	fs.StringVar(&o.email, "email", "bench@example.org", "email of the application's first user (Strata) or of the superuser (PocketBase)")
	fs.StringVar(&o.pass, "password", "bench-password-1", "password for -email")
	fs.StringVar(&o.table, "table", "finds", "table (PocketBase: collection) to create and measure")
	rows := fs.String("rows", "10000,100000", "comma-separated table sizes to measure, in increasing order (the table grows between them)")
	fs.IntVar(&o.clients, "clients", 16, "concurrent clients")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per operation")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured time per operation before it is measured")
	fs.IntVar(&o.batch, "batch", 1000, "records per batch request when seeding and deleting")
	fs.IntVar(&o.seedConc, "seed-clients", 1, "concurrent batch requests while seeding")
	opsFlag := fs.String("ops", "list-eq,list-sort,list-substr,read,update,create", "operations to run, in this order")
	fs.StringVar(&o.label, "label", "", "name of the target in the output (default: strata/<engine> or pocketbase)")
	fs.StringVar(&o.csvPath, "csv", "", "append results to this CSV file")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the generated data and the random choices")
	fs.DurationVar(&o.requestTimeout, "timeout", 120*time.Second, "timeout of one request")
	fs.BoolVar(&o.deleteAfterCreate, "delete-created", true, "delete the records the create operation made, so every size is exact")
	fs.BoolVar(&o.realtime, "realtime", false, "measure live changes (Server-Sent Events) instead of the operations: see below")
	fs.IntVar(&o.rt.subscribers, "subscribers", 500, "realtime: streams open, each with one filter subscription")
	fs.IntVar(&o.rt.users, "users", 5, "realtime: accounts the streams are spread over (the bench's super_admin, then admin, writer, reader in turn)")
	fs.IntVar(&o.rt.filters, "filters", 10, "realtime: distinct filters (material equal to one of the first n); a write reaches subscribers/filters streams")
	fs.Float64Var(&o.rt.rate, "rate", 200, "realtime: writes per second (half creates, half updates)")
	fs.IntVar(&o.rt.writers, "writers", 32, "realtime: writes under way at most at once")
	fs.DurationVar(&o.rt.drain, "drain", 15*time.Second, "realtime: how long to wait for the events still on their way after the last write")
	fs.DurationVar(&o.rt.settle, "settle", 3*time.Second, "realtime: pause before reading the server's figures at rest and with idle streams")
	fs.DurationVar(&o.rt.gcWait, "gc-wait", 130*time.Second, "realtime: after the clients left, wait up to this long for the server's next garbage collection and read its memory again (0: do not)")
	fs.BoolVar(&o.syncMode, "sync", false, "measure offline sync's pull (GET /sync/{tb}) instead of the operations: see below")
	fs.StringVar(&o.sync.step, "sync-step", "all", "sync: seed (fill the table to the first -rows, nothing else), pull (measure a table seeded before), or all")
	fs.IntVar(&o.sync.limit, "sync-limit", 1000, "sync: rows per page of the pull (1..1000)")
	fs.IntVar(&o.sync.rounds, "sync-rounds", 5, "sync: incremental pulls measured, each after -sync-changes changes")
	fs.IntVar(&o.sync.changes, "sync-changes", 100, "sync: records changed before each incremental pull")
	fs.StringVar(&o.rt.metrics, "metrics", "", "realtime and sync: URL of the server's Prometheus metrics (STRATA_METRICS_ADDR), e.g. http://127.0.0.1:18191/metrics")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (see -h)", fs.Arg(0))
	}
	if (o.url == "") == (o.pocketbase == "") {
		return o, errors.New("give exactly one of -url (Strata) and -pocketbase (see -h)")
	}
	last := 0
	for _, s := range strings.Split(*rows, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return o, fmt.Errorf("-rows: %q is not a positive number", s)
		}
		if n < last {
			return o, errors.New("-rows: sizes must increase")
		}
		last = n
		o.rows = append(o.rows, n)
	}
	for _, s := range strings.Split(*opsFlag, ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.ops = append(o.ops, s)
		}
	}
	if o.realtime && (o.rt.subscribers < 0 || o.rt.users < 1 || o.rt.filters < 1 || o.rt.filters > len(materials) || o.rt.rate <= 0 || o.rt.writers < 1) {
		return o, fmt.Errorf("-subscribers, -users, -filters (at most %d), -rate and -writers must be positive", len(materials))
	}
	if o.syncMode && (o.sync.limit < 1 || o.sync.limit > 1000 || o.sync.rounds < 0 || o.sync.changes < 1 || o.sync.changes > o.sync.limit ||
		!slices.Contains([]string{"seed", "pull", "all"}, o.sync.step)) {
		return o, errors.New("-sync-limit 1..1000, -sync-changes 1..-sync-limit, -sync-rounds >= 0, -sync-step seed, pull or all")
	}
	if o.clients < 1 || o.batch < 1 || o.seedConc < 1 || o.duration <= 0 {
		return o, errors.New("-clients, -batch, -seed-clients and -duration must be positive")
	}
	return o, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// opEnv is what an operation may use: the ids seeded so far, the data
// generator, and where a create records the ids it made.
type opEnv struct {
	ids     []string
	gen     *generator
	created *idSink
}

func (e opEnv) randomID(r *rand.Rand) string { return e.ids[r.IntN(len(e.ids))] }
