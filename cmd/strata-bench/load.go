package main

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// target is a server under test: Strata or PocketBase.
type target interface {
	label() string
	// setup signs in and creates the table with its index; the table must
	// be new or empty.
	setup(ctx context.Context, email, password string) error
	// count is the number of rows in the table.
	count(ctx context.Context) (int64, error)
	// create adds rows in one batch request, answering their ids in order.
	create(ctx context.Context, rows []row) ([]string, error)
	// remove deletes records in one batch request.
	remove(ctx context.Context, ids []string) error
	// op is the named operation's single request.
	op(name string) (opFunc, bool)
}

// opFunc sends one request of an operation.
type opFunc func(ctx context.Context, e opEnv, r *rand.Rand) error

// result is one operation's measurement.
type result struct {
	lat      []time.Duration // successful requests
	errors   int
	firstErr error
	elapsed  time.Duration
}

func (r result) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(len(r.lat)) / r.elapsed.Seconds()
}

// pct is the p-th percentile (nearest rank) of the successful requests.
func (r result) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	k := int(p/100*float64(len(r.lat))+0.999999) - 1
	k = max(0, min(k, len(r.lat)-1))
	return r.lat[k]
}

// load runs op with n clients for d, each client sending its next request
// when the last one is answered. Requests still under way at the end are
// waited for and counted, so the elapsed time is measured to the last answer.
func load(ctx context.Context, n int, d time.Duration, e opEnv, op opFunc, seed uint64) result {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu  sync.Mutex
		res result
		wg  sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			var lat []time.Duration
			errs := 0
			var first error
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				err := op(ctx, e, r)
				if err != nil {
					errs++
					if first == nil {
						first = err
					}
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			res.errors += errs
			if res.firstErr == nil {
				res.firstErr = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	slices.Sort(res.lat)
	return res
}

// seed adds n generated rows in batches of size, conc batches at a time,
// answering the new ids in the order of the rows.
// The rows are those of positions have+1 to have+n of the generated data.
func seed(ctx context.Context, t target, g *generator, have, n, size, conc int) ([]string, error) {
	type job struct {
		i    int
		rows []row
	}
	nb := (n + size - 1) / size
	out := make([][]string, nb)
	jobs := make(chan job)
	errc := make(chan error, conc)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				ids, err := t.create(ctx, j.rows)
				if err != nil {
					errc <- err
					cancel()
					return
				}
				out[j.i] = ids
			}
		}()
	}
	r := g.seedRand(have)
	for i := 0; i < nb && ctx.Err() == nil; i++ {
		k := min(size, n-i*size)
		rows := make([]row, k)
		for j := range rows {
			rows[j] = g.row(r, int64(have+i*size+j+1))
		}
		select {
		case jobs <- job{i, rows}:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	close(errc)
	var ids []string
	for _, b := range out {
		ids = append(ids, b...)
	}
	if err := <-errc; err != nil {
		return ids, err
	}
	return ids, ctx.Err()
}

// deleteAll removes records in batches of size.
func deleteAll(ctx context.Context, t target, ids []string, size int) error {
	for len(ids) > 0 {
		k := min(size, len(ids))
		if err := t.remove(ctx, ids[:k]); err != nil {
			return err
		}
		ids = ids[k:]
	}
	return nil
}

// idSink collects the ids of the records a create operation made.
type idSink struct {
	mu  sync.Mutex
	ids []string
}

func (s *idSink) add(id string) {
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
}

func (s *idSink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ids)
}
