package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The realtime mode (-realtime): live changes over Server-Sent Events
// (docs/api.md "Live changes", issue 31). It measures, on one app:
//
//  1. the writer alone: -rate writes a second (creates and updates of the
//     table, half each) for -duration, open loop, with no stream open;
//  2. -subscribers real HTTP clients, each reading its own text/event-stream
//     with one filter subscription on the table (material equal to one of
//     -filters materials), spread over -users accounts of different
//     privileges; then the same writer again.
//
// An event is tied to its write by the record id and version it carries
// (the write's answer gives both); the delivery latency of an event is its arrival
// at the subscriber minus the arrival of the write's answer (the commit as
// the writer sees it; an event that comes first counts 0). Every subscriber
// whose filter the written row matches must get the event: the ones that
// never come are counted as missed. The server's goroutines and memory are
// read from its Prometheus metrics (-metrics) before, during and after.

// rtOptions are the realtime mode's flags.
type rtOptions struct {
	subscribers, users, filters int
	rate                        float64
	writers                     int
	drain, settle, gcWait       time.Duration
	metrics                     string
}

// rtWrite is one write of the writer: its marker, material and timing.
type rtWrite struct {
	material    int
	id, version int64
	sent        time.Time
	done        time.Time // zero: it failed
}

// rtWriteRun is the writer's measurement.
type rtWriteRun struct {
	writes   []rtWrite
	lat      []time.Duration // answered writes, sorted
	errors   int
	firstErr error
	elapsed  time.Duration // first send to last answer
	late     int           // sends that left more than 100 ms behind their schedule
}

func (w rtWriteRun) rate() float64 {
	if w.elapsed <= 0 {
		return 0
	}
	return float64(len(w.lat)) / w.elapsed.Seconds()
}

// rtArrival is one event a subscriber read.
type rtArrival struct {
	id, version int64
	at          time.Time
}

// rtSubscriber is one real client reading its stream.
type rtSubscriber struct {
	material int
	user     int
	resp     *http.Response
	arrivals []rtArrival  // written by its reader only, read after it ended
	seen     atomic.Int64 // arrivals so far
	other    atomic.Int64
	resyncs  atomic.Int64
	done     chan struct{}
	err      error
}

// rtUser is an account the subscribers are spread over.
type rtUser struct {
	email, auth string
	privilege   int
}

// serverStats are the figures read from the server's metrics.
type serverStats struct {
	goroutines, rss, heap float64
	lastGC                float64 // go_memstats_last_gc_time_seconds (Unix)
}

func (s serverStats) String() string {
	return fmt.Sprintf("%4.0f goroutines, RSS %6.1f MiB, heap in use %6.1f MiB", s.goroutines, s.rss/(1<<20), s.heap/(1<<20))
}

func runRealtime(ctx context.Context, o options, s *strata, stdout, stderr io.Writer, csvw *csv.Writer) error {
	ro := o.rt
	if ro.metrics == "" {
		return errors.New("-realtime needs -metrics, the URL of the server's Prometheus metrics (STRATA_METRICS_ADDR)")
	}
	gen := newGenerator(o.seed)
	label := o.label
	if label == "" {
		label = s.label()
	}
	// The table holds -rows rows before anything is measured (the first
	// size of -rows): subscribing reads the ids a filter shows now.
	if n := o.rows[0]; n > 0 {
		start := time.Now()
		if _, err := seed(ctx, s, gen, 0, n, o.batch, o.seedConc); err != nil {
			return fmt.Errorf("seeding: %w", err)
		}
		fmt.Fprintf(stdout, "seeded %d rows in %.1f s\n", n, time.Since(start).Seconds())
	}
	users, err := rtUsers(ctx, s, ro.users)
	if err != nil {
		return fmt.Errorf("users: %w", err)
	}
	fmt.Fprintf(stdout, "realtime: %d subscribers over %d users, %d filters (each write reaches ~%d subscribers), %.0f writes/s for %s\n",
		ro.subscribers, len(users), ro.filters, ro.subscribers/ro.filters, ro.rate, o.duration)

	// The server's goroutines count the connections the bench keeps open:
	// the baseline and the figures after are read with none.
	s.hc.CloseIdleConnections()
	time.Sleep(ro.settle)
	base, err := scrape(ctx, s.hc, ro.metrics)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	fmt.Fprintf(stdout, "server at rest:             %s\n", base)

	// 1. The writer alone.
	if o.warmup > 0 {
		rtWriter(ctx, s, gen, ro, o.warmup, o.seed+10, 0)
	}
	alone := rtWriter(ctx, s, gen, ro, o.duration, o.seed+11, 1_000_000)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if alone.firstErr != nil {
		fmt.Fprintf(stderr, "  writer alone: first error: %v\n", alone.firstErr)
	}

	// 2. The subscribers, then the writer again.
	subs, err := rtSubscribe(ctx, s, users, ro)
	defer func() {
		for _, c := range subs {
			c.resp.Body.Close()
		}
	}()
	if err != nil {
		return err
	}
	time.Sleep(ro.settle)
	idle, _ := scrape(ctx, s.hc, ro.metrics)
	fmt.Fprintf(stdout, "%4d streams open, idle:    %s\n", len(subs), idle)

	peak := serverStats{}
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-sampleCtx.Done():
				return
			case <-t.C:
				if st, err := scrape(sampleCtx, s.hc, ro.metrics); err == nil {
					peak.goroutines = max(peak.goroutines, st.goroutines)
					peak.rss = max(peak.rss, st.rss)
					peak.heap = max(peak.heap, st.heap)
				}
			}
		}
	}()
	with := rtWriter(ctx, s, gen, ro, o.duration, o.seed+12, 2_000_000)
	if with.firstErr != nil {
		fmt.Fprintf(stderr, "  writer with subscribers: first error: %v\n", with.firstErr)
	}
	// Events still on their way are waited for, up to -drain.
	expected := rtExpected(with, subs, ro.filters)
	drained := time.Now()
	deadline := drained.Add(ro.drain)
	got := 0
	for time.Now().Before(deadline) && ctx.Err() == nil {
		got = 0
		for _, c := range subs {
			got += int(c.delivered())
		}
		if got >= expected {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Fprintf(stdout, "after the last write: %d of %d events in %.1f s\n", got, expected, time.Since(drained).Seconds())
	stopSampling()
	<-sampled
	fmt.Fprintf(stdout, "peak while writing:         %s\n", peak)

	// The clients leave: every stream is closed, the readers end.
	for _, c := range subs {
		c.resp.Body.Close()
	}
	for _, c := range subs {
		<-c.done
	}
	del, missed, extra, resyncs := rtDelivery(with, subs, ro.filters)
	subs = nil

	// Back to the baseline? The server's goroutines are polled until they
	// are back (or 30 s passed); memory is what it is then.
	s.hc.CloseIdleConnections()
	var after serverStats
	until := time.Now().Add(30 * time.Second)
	for {
		after, err = scrape(ctx, s.hc, ro.metrics)
		if err != nil || after.goroutines <= base.goroutines+2 || time.Now().After(until) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	fmt.Fprintf(stdout, "after the clients left:     %s\n", after)
	// The heap in use counts garbage until a collection: an idle server
	// collects only every 2 minutes (the runtime's forced GC).
	left := float64(time.Now().Unix())
	for until := time.Now().Add(ro.gcWait); ro.gcWait > 0 && time.Now().Before(until) && ctx.Err() == nil; {
		time.Sleep(2 * time.Second)
		if st, err := scrape(ctx, s.hc, ro.metrics); err == nil && st.lastGC > left {
			fmt.Fprintf(stdout, "after the next collection:  %s\n", st)
			break
		}
	}

	fmt.Fprintf(stdout, "\n%s, realtime, %d subscribers\n", label, ro.subscribers)
	fmt.Fprintf(stdout, "%-26s %9s %9s %9s %8s %7s\n", "writer", "writes/s", "p50 ms", "p99 ms", "writes", "errors")
	for _, r := range []struct {
		name string
		w    rtWriteRun
	}{{"without subscribers", alone}, {fmt.Sprintf("with %d subscribers", ro.subscribers), with}} {
		fmt.Fprintf(stdout, "%-26s %9.1f %9.2f %9.2f %8d %7d\n", r.name, r.w.rate(), ms(pctOf(r.w.lat, 50)), ms(pctOf(r.w.lat, 99)), len(r.w.lat), r.w.errors)
	}
	if alone.rate() > 0 {
		fmt.Fprintf(stdout, "write throughput with subscribers: %+.1f%% of the run without\n", 100*(with.rate()/alone.rate()-1))
	}
	if alone.late+with.late > 0 {
		fmt.Fprintf(stdout, "(the writer fell behind its schedule by over 100 ms %d times: the client machine is saturated)\n", alone.late+with.late)
	}
	// An event that never came counts as later than any that did: the
	// percentiles are over every event expected.
	pm := func(p float64) string {
		k := int(p/100*float64(len(del)+missed)+0.999999) - 1
		if k >= len(del) {
			return fmt.Sprintf("> %s (not delivered)", ro.drain)
		}
		return fmt.Sprintf("%.1f ms", ms(del[max(k, 0)]))
	}
	fmt.Fprintf(stdout, "delivery: %d of %d events, p50 %s, p95 %s, p99 %s, max %s; missed %d, unexpected %d, resync %d\n",
		len(del), len(del)+missed, pm(50), pm(95), pm(99), pm(100), missed, extra, resyncs)
	if csvw != nil {
		row := func(op string, n, errs int, secs, rate float64, p50, p99 time.Duration) {
			csvw.Write([]string{label, strconv.Itoa(ro.subscribers), op, strconv.Itoa(n), strconv.Itoa(errs),
				fmt.Sprintf("%.2f", secs), fmt.Sprintf("%.1f", rate), fmt.Sprintf("%.2f", ms(p50)), fmt.Sprintf("%.2f", ms(p99))})
		}
		row("rt-write-alone", len(alone.lat), alone.errors, alone.elapsed.Seconds(), alone.rate(), pctOf(alone.lat, 50), pctOf(alone.lat, 99))
		row("rt-write-with", len(with.lat), with.errors, with.elapsed.Seconds(), with.rate(), pctOf(with.lat, 50), pctOf(with.lat, 99))
		row("rt-delivery", len(del), missed, with.elapsed.Seconds(), 0, pctOf(del, 50), pctOf(del, 99))
		csvw.Flush()
	}
	return nil
}

// rtUsers are the accounts the streams are spread over: the bench's own
// super_admin and n-1 more, cycling through admin, writer and reader.
func rtUsers(ctx context.Context, s *strata, n int) ([]rtUser, error) {
	users := []rtUser{{email: "(bench)", auth: s.auth, privilege: 1}}
	levels := []int{10, 20, 30}
	for i := 1; i < n; i++ {
		u := rtUser{email: fmt.Sprintf("rt%d@example.org", i), privilege: levels[(i-1)%len(levels)]}
		err := call(ctx, s.hc, "POST", s.api("/user"), s.auth,
			map[string]any{"name": fmt.Sprintf("Realtime %d", i), "email": u.email, "password": "bench-password-1", "privilege": u.privilege}, nil)
		var he *httpError
		if err != nil && !(errors.As(err, &he) && he.status == http.StatusConflict) {
			return nil, err
		}
		var login struct {
			Token string `json:"token"`
		}
		if err := call(ctx, s.hc, "POST", s.api("/auth/login"), "",
			map[string]any{"email": u.email, "password": "bench-password-1"}, &login); err != nil {
			return nil, err
		}
		u.auth = "Bearer " + login.Token
		users = append(users, u)
	}
	return users, nil
}

// rtSubscribe opens the streams, a few at a time, and gives each its
// subscription: subscriber i is user i mod users', filtering on material
// i mod filters.
func rtSubscribe(ctx context.Context, s *strata, users []rtUser, ro rtOptions) ([]*rtSubscriber, error) {
	// Streams have connections of their own: none is shared or idle.
	sc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	subs := make([]*rtSubscriber, ro.subscribers)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	sem := make(chan struct{}, 8)
	for i := range subs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := rtOpen(ctx, s, sc, users[i%len(users)], i%len(users), i%ro.filters)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = fmt.Errorf("subscriber %d: %w", i, err)
				}
				return
			}
			subs[i] = c
		}()
	}
	wg.Wait()
	opened := slices.DeleteFunc(subs, func(c *rtSubscriber) bool { return c == nil })
	return opened, first
}

// rtOpen opens one stream, reads its connect event and subscribes it.
func rtOpen(ctx context.Context, s *strata, hc *http.Client, u rtUser, ui, material int) (*rtSubscriber, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", s.api("/realtime"), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", u.auth)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		resp.Body.Close()
		return nil, &httpError{"GET", req.URL.String(), resp.StatusCode, string(b)}
	}
	c := &rtSubscriber{material: material, user: ui, resp: resp, done: make(chan struct{})}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	clientID, err := rtConnect(br)
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	go c.read(br)
	body := map[string]any{"client_id": clientID, "subscriptions": []map[string]any{{
		"id": "list", "table": s.table, "filter": map[string]any{"material": map[string]any{"_eq": materials[material]}},
	}}}
	if err := call(ctx, s.hc, "POST", s.api("/realtime/subscriptions"), u.auth, body, nil); err != nil {
		resp.Body.Close()
		<-c.done
		return nil, err
	}
	return c, nil
}

// rtConnect reads up to the connect event and answers its client_id.
func rtConnect(br *bufio.Reader) (string, error) {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("reading the connect event: %w", err)
		}
		if strings.HasPrefix(line, "data: ") {
			const key = `"client_id":"`
			i := strings.Index(line, key)
			if i < 0 {
				return "", fmt.Errorf("connect event without client_id: %s", line)
			}
			rest := line[i+len(key):]
			return rest[:strings.IndexByte(rest, '"')], nil
		}
	}
}

// read takes the events off the stream until it ends, noting when each
// change event came and which write it carries (the marker in its data).
func (c *rtSubscriber) read(br *bufio.Reader) {
	defer close(c.done)
	event := ""
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if !errors.Is(err, bufio.ErrBufferFull) {
				c.err = err
				return
			}
			// A line longer than the buffer: only its start is looked at.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		}
		at := time.Now()
		switch {
		case len(line) > 7 && string(line[:7]) == "event: ":
			event = strings.TrimSpace(string(line[7:]))
		case len(line) > 6 && string(line[:6]) == "data: ":
			switch event {
			case "create", "update", "enter":
				if id, version, ok := idVersion(line); ok {
					c.arrivals = append(c.arrivals, rtArrival{id, version, at})
					c.seen.Add(1)
				} else {
					c.other.Add(1)
				}
			case "resync":
				c.resyncs.Add(1)
			default:
				c.other.Add(1)
			}
		}
	}
}

// delivered is how many write events came so far (arrivals itself is
// read only once the reader ended).
func (c *rtSubscriber) delivered() int64 { return c.seen.Load() }

// idVersion reads the id and version of a record event's data,
// {"table":…,"id":…,"record":{…},"version":…,…}, without decoding the
// record: the first "id" is the event's own (table comes before it), and
// the last "version" too (only user_id, actor, at and subscriptions follow
// the record).
func idVersion(s []byte) (id, version int64, ok bool) {
	num := func(i int) (int64, bool) {
		var n int64
		k := i
		for ; k < len(s) && s[k] >= '0' && s[k] <= '9'; k++ {
			n = n*10 + int64(s[k]-'0')
		}
		return n, k > i
	}
	i := bytes.Index(s, []byte(`,"id":`))
	j := bytes.LastIndex(s, []byte(`,"version":`))
	if i < 0 || j < 0 {
		return 0, 0, false
	}
	id, ok1 := num(i + len(`,"id":`))
	version, ok2 := num(j + len(`,"version":`))
	return id, version, ok1 && ok2
}

// rtWriter writes at ro.rate for d, open loop (a write is sent at its time
// whether the ones before were answered or not, by up to ro.writers at
// once), half creates, half updates of a record it created, each with the
// marker rtseq-<first+i>; material of write i is i mod ro.filters.
func rtWriter(ctx context.Context, s *strata, g *generator, ro rtOptions, d time.Duration, seedv uint64, first int) rtWriteRun {
	n := int(ro.rate * d.Seconds())
	run := rtWriteRun{writes: make([]rtWrite, n)}
	r := rand.New(rand.NewPCG(seedv, 1))
	var (
		mu      sync.Mutex
		created = make([][]string, ro.filters) // ids this run created, by material, for updates
		next    = make([]int, ro.filters)
		wg      sync.WaitGroup
	)
	sem := make(chan struct{}, ro.writers)
	interval := time.Duration(float64(time.Second) / ro.rate)
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		at := start.Add(time.Duration(i) * interval)
		if w := time.Until(at); w > 0 {
			time.Sleep(w)
		}
		sem <- struct{}{}
		if time.Since(at) > 100*time.Millisecond {
			run.late++
		}
		m := i % ro.filters
		rw := g.newRow(r)
		rw.Material = materials[m]
		rw.Context = "rt " + strconv.Itoa(first+i)
		mu.Lock()
		target := ""
		if c := created[m]; i%2 == 1 && len(c) > 0 {
			// An update keeps the material, so it is an update for the
			// same subscribers; the record is one of this run's, taken in
			// turn.
			target = c[next[m]%len(c)]
			next[m]++
		}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			sent := time.Now()
			var err error
			var out struct {
				ID      json.RawMessage `json:"id"`
				Version int64           `json:"version"`
			}
			if target == "" {
				err = call(ctx, s.hc, "POST", s.api("/record/"+s.table), s.auth, map[string]any{"core": rw}, &out)
				if err == nil {
					mu.Lock()
					created[m] = append(created[m], idString(out.ID))
					mu.Unlock()
				}
			} else {
				err = call(ctx, s.hc, "POST", s.api("/record/"+s.table+"/"+target), s.auth,
					map[string]any{"core": map[string]any{"weight": rw.Weight, "context": rw.Context}}, &out)
			}
			done := time.Now()
			mu.Lock()
			defer mu.Unlock()
			run.writes[i] = rtWrite{material: m, sent: sent}
			if err != nil {
				run.errors++
				if run.firstErr == nil {
					run.firstErr = err
				}
				return
			}
			run.writes[i].done = done
			run.writes[i].id, _ = strconv.ParseInt(idString(out.ID), 10, 64)
			run.writes[i].version = out.Version
			run.lat = append(run.lat, done.Sub(sent))
		}()
	}
	wg.Wait()
	run.elapsed = time.Since(start)
	slices.Sort(run.lat)
	return run
}

// rtExpected is how many write events the subscribers must get: each
// answered write, once for every subscriber filtering on its material.
func rtExpected(w rtWriteRun, subs []*rtSubscriber, filters int) int {
	per := make([]int, filters)
	for _, c := range subs {
		per[c.material]++
	}
	n := 0
	for _, wr := range w.writes {
		if !wr.done.IsZero() {
			n += per[wr.material]
		}
	}
	return n
}

// rtDelivery matches the subscribers' events with the writes: the
// delivery latencies (sorted), the events expected that never came, the
// events no write explains (another material, a repeat) and the resyncs.
func rtDelivery(w rtWriteRun, subs []*rtSubscriber, filters int) (lat []time.Duration, missed, extra, resyncs int) {
	matched := 0
	byChange := map[[2]int64]int{}
	for k, wr := range w.writes {
		if !wr.done.IsZero() {
			byChange[[2]int64{wr.id, wr.version}] = k
		}
	}
	for _, c := range subs {
		resyncs += int(c.resyncs.Load())
		seen := map[int]bool{}
		for _, a := range c.arrivals {
			k, ok := byChange[[2]int64{a.id, a.version}]
			if !ok || w.writes[k].material != c.material || seen[k] {
				extra++
				continue
			}
			seen[k] = true
			matched++
			lat = append(lat, max(0, a.at.Sub(w.writes[k].done)))
		}
	}
	slices.Sort(lat)
	return lat, rtExpected(w, subs, filters) - matched, extra, resyncs
}

// pctOf is the p-th percentile (nearest rank) of sorted durations.
func pctOf(d []time.Duration, p float64) time.Duration {
	return result{lat: d}.pct(p)
}

// scrape reads the server's goroutines and memory from its Prometheus
// metrics (text format): go_goroutines, process_resident_memory_bytes,
// go_memstats_heap_inuse_bytes.
func scrape(ctx context.Context, hc *http.Client, url string) (serverStats, error) {
	var st serverStats
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return st, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	found := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		var dst *float64
		switch name {
		case "go_goroutines":
			dst = &st.goroutines
		case "process_resident_memory_bytes":
			dst = &st.rss
		case "go_memstats_heap_inuse_bytes":
			dst = &st.heap
		case "go_memstats_last_gc_time_seconds":
			_, _ = fmt.Sscan(strings.TrimSpace(val), &st.lastGC)
			continue
		default:
			continue
		}
		if *dst, err = strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			found++
		}
	}
	if found < 3 {
		return st, fmt.Errorf("%s: go_goroutines, process_resident_memory_bytes or go_memstats_heap_inuse_bytes missing", url)
	}
	return st, sc.Err()
}
