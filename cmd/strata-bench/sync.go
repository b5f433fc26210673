package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The sync mode (-sync): offline sync's pull (GET /sync/{tb}, docs/sync.md,
// issue 32). Its steps (-sync-step):
//
//   - seed: the table filled to the first size of -rows, nothing measured
//     (bench-sync.sh restarts the server after it, so that the server's
//     peak memory is the pull's alone);
//   - pull: a first pull of the whole table over HTTP, page after page of
//     -sync-limit rows, timed (rows/s), with the server's resident memory
//     sampled from its metrics meanwhile (peak); then, -sync-rounds times,
//     100 records changed and one incremental pull from the checkpoint,
//     timed, which must answer exactly those 100;
//   - all: both, one after the other (one server).

// syncOptions are the sync mode's flags.
type syncOptions struct {
	step    string
	limit   int
	rounds  int
	changes int
}

// syncPage is an answer of GET /sync/{tb}, as much as the bench reads.
type syncPage struct {
	Rows []struct {
		ID int64 `json:"id"`
	} `json:"rows"`
	Removed    []int64 `json:"removed"`
	Checkpoint string  `json:"checkpoint"`
	More       bool    `json:"more"`
	Reset      bool    `json:"reset"`
}

func (s *strata) pullPage(ctx context.Context, checkpoint string, limit int) (syncPage, error) {
	var p syncPage
	q := url.Values{"checkpoint": {checkpoint}, "limit": {strconv.Itoa(limit)}}
	err := call(ctx, s.hc, "GET", s.api("/sync/"+s.table+"?"+q.Encode()), s.auth, nil, &p)
	return p, err
}

// signIn is setup for a table that exists and holds rows (the pull step).
func (s *strata) signIn(ctx context.Context, email, password string) error {
	var info struct {
		Engine string `json:"engine"`
	}
	if err := call(ctx, s.hc, "GET", s.base+"/api/info", "", nil, &info); err != nil {
		return err
	}
	s.engine = info.Engine
	var login struct {
		Token string `json:"token"`
	}
	if err := call(ctx, s.hc, "POST", s.api("/auth/login"), "", map[string]any{"email": email, "password": password}, &login); err != nil {
		return err
	}
	s.auth = "Bearer " + login.Token
	return nil
}

func runSync(ctx context.Context, o options, s *strata, stdout io.Writer, csvw *csv.Writer) error {
	so := o.sync
	label := o.label
	if label == "" {
		label = s.label()
	}
	if so.step == "seed" || so.step == "all" {
		start := time.Now()
		if _, err := seed(ctx, s, newGenerator(o.seed), 0, o.rows[0], o.batch, o.seedConc); err != nil {
			return fmt.Errorf("seeding: %w", err)
		}
		fmt.Fprintf(stdout, "seeded %d rows in %.1f s\n", o.rows[0], time.Since(start).Seconds())
		if so.step == "seed" {
			return nil
		}
	}
	total, err := s.count(ctx)
	if err != nil {
		return err
	}
	if o.rt.metrics == "" {
		return errors.New("-sync needs -metrics, the URL of the server's Prometheus metrics (STRATA_METRICS_ADDR)")
	}
	rest, err := scrape(ctx, s.hc, o.rt.metrics)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	fmt.Fprintf(stdout, "server at rest:   %s\n", rest)

	// The first pull, with the server's memory sampled meanwhile.
	var peak serverStats
	var mu sync.Mutex
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sampleCtx.Done():
				return
			case <-t.C:
				if st, err := scrape(sampleCtx, s.hc, o.rt.metrics); err == nil {
					mu.Lock()
					peak.rss, peak.heap, peak.goroutines = max(peak.rss, st.rss), max(peak.heap, st.heap), max(peak.goroutines, st.goroutines)
					mu.Unlock()
				}
			}
		}
	}()
	start := time.Now()
	checkpoint, rows, pages := "", 0, 0
	for {
		p, err := s.pullPage(ctx, checkpoint, so.limit)
		if err != nil {
			stopSampling()
			return fmt.Errorf("first pull, page %d: %w", pages+1, err)
		}
		rows, pages, checkpoint = rows+len(p.Rows), pages+1, p.Checkpoint
		if !p.More {
			break
		}
	}
	elapsed := time.Since(start)
	stopSampling()
	<-sampled
	if int64(rows) != total {
		return fmt.Errorf("the first pull gave %d rows, the table holds %d", rows, total)
	}
	rate := float64(rows) / elapsed.Seconds()
	fmt.Fprintf(stdout, "\n%s, sync, %d rows, pages of %d\n", label, rows, so.limit)
	fmt.Fprintf(stdout, "first pull:       %d rows in %d pages, %.2f s: %.0f rows/s\n", rows, pages, elapsed.Seconds(), rate)
	fmt.Fprintf(stdout, "peak while pulling: %s\n", peak)
	if csvw != nil {
		csvw.Write([]string{label, strconv.Itoa(rows), "sync-first-pull", strconv.Itoa(pages), "0",
			fmt.Sprintf("%.2f", elapsed.Seconds()), fmt.Sprintf("%.1f", rate), "", "", fmt.Sprintf("%.1f", peak.rss/(1<<20))})
		csvw.Flush()
	}

	// Incremental pulls after -sync-changes changes each.
	ids, err := s.allIDs(ctx, total)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(o.seed, 42))
	var lat []time.Duration
	for round := range so.rounds {
		changed := map[int64]bool{}
		for len(changed) < so.changes {
			id := ids[r.IntN(len(ids))]
			if changed[id] {
				continue
			}
			changed[id] = true
			if err := call(ctx, s.hc, "POST", s.api("/record/"+s.table+"/"+strconv.FormatInt(id, 10)), s.auth,
				map[string]any{"core": map[string]any{"weight": randomWeight(r)}}, nil); err != nil {
				return fmt.Errorf("change: %w", err)
			}
		}
		t0 := time.Now()
		p, err := s.pullPage(ctx, checkpoint, so.limit)
		d := time.Since(t0)
		if err != nil {
			return fmt.Errorf("incremental pull: %w", err)
		}
		got := map[int64]bool{}
		for _, row := range p.Rows {
			got[row.ID] = true
		}
		if p.More || p.Reset || len(p.Rows) != so.changes || len(got) != so.changes || len(p.Removed) != 0 {
			return fmt.Errorf("round %d: the incremental pull gave %d rows (%d distinct), %d removed, more %v, reset %v; want the %d changed",
				round+1, len(p.Rows), len(got), len(p.Removed), p.More, p.Reset, so.changes)
		}
		for id := range changed {
			if !got[id] {
				return fmt.Errorf("round %d: record %d changed but not pulled", round+1, id)
			}
		}
		checkpoint = p.Checkpoint
		lat = append(lat, d)
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		med := lat[len(lat)/2]
		fmt.Fprintf(stdout, "incremental pull: %d changes, exactly those answered; %d rounds: min %.1f ms, median %.1f ms, max %.1f ms\n",
			so.changes, len(lat), ms(lat[0]), ms(med), ms(lat[len(lat)-1]))
		if csvw != nil {
			csvw.Write([]string{label, strconv.Itoa(rows), "sync-incremental-" + strconv.Itoa(so.changes), strconv.Itoa(len(lat)), "0",
				"", "", fmt.Sprintf("%.2f", ms(med)), fmt.Sprintf("%.2f", ms(lat[len(lat)-1])), ""})
			csvw.Flush()
		}
	}
	return nil
}

// allIDs are the table's ids (the list's ids_only pages).
func (s *strata) allIDs(ctx context.Context, total int64) ([]int64, error) {
	var out []int64
	for page := 1; int64(len(out)) < total; page++ {
		var ans struct {
			IDs []int64 `json:"ids"`
		}
		u := s.api("/records/" + s.table + "?ids_only=1&per_page=10000&page=" + strconv.Itoa(page))
		if err := call(ctx, s.hc, "GET", u, s.auth, nil, &ans); err != nil {
			return nil, err
		}
		if len(ans.IDs) == 0 {
			break
		}
		out = append(out, ans.IDs...)
	}
	return out, nil
}
