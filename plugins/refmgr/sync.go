package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"

	"github.com/strata-archaeo/strata/plugins/refmgr/zotero"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// cached is what the provider says of one item: its data and citation,
// or that it is gone, or why it could not say.
type cached struct {
	item     zotero.Item
	citation string
	gone     bool
	err      error
}

// columns are the link columns the answer sets.
func (c cached) columns() map[string]any {
	if c.gone {
		return map[string]any{"detached": 1, "synced_at": now()}
	}
	return map[string]any{"author_year": zotero.AuthorYear(c.item), "full_citation": nullable(c.citation),
		"refmgr_version": c.item.Version, "synced_at": now(), "detached": 0}
}

// fetch reads one item and its citation.
func (p *plugin) fetch(ctx context.Context, zl zotero.Library, style, key string) cached {
	_, client := p.current()
	items, err := client.Batch(ctx, zl, []string{key})
	if err != nil {
		return cached{err: err}
	}
	it, ok := items[key]
	if !ok {
		return cached{gone: true}
	}
	return p.cite(ctx, zl, style, it)
}

// cite completes an item with its citation.
func (p *plugin) cite(ctx context.Context, zl zotero.Library, style string, it zotero.Item) cached {
	_, client := p.current()
	c, err := client.Citation(ctx, zl, it.Key, style)
	switch {
	case errors.Is(err, zotero.ErrNotFound):
		return cached{gone: true} // deleted between the two requests
	case err != nil:
		// Without the citation the version is not stored either, so the
		// next sync tries again.
		return cached{err: err}
	}
	return cached{item: it, citation: c}
}

// failure is an item a sync could not refresh, and why.
type failure struct {
	LibID      int64  `json:"lib_id"`
	Key        string `json:"refmgr_key"`
	Code       string `json:"code"`
	RetryAfter int    `json:"retry_after,omitempty"` // seconds, for rate_limited
}

// syncReport is a sync's answer.
type syncReport struct {
	Total     int       `json:"total"`     // items (library, key) looked at
	Updated   int       `json:"updated"`   // whose cache changed
	Detached  int       `json:"detached"`  // no longer in their library
	Unchanged int       `json:"unchanged"` // same version as cached
	Errors    int       `json:"errors"`    // len(Failed)
	Failed    []failure `json:"failed"`
}

func (s *syncReport) fail(libID int64, key string, err error) {
	f := failure{LibID: libID, Key: key, Code: "refmgr_unavailable"}
	var rl *zotero.RateLimitError
	switch {
	case errors.As(err, &rl):
		f.Code, f.RetryAfter = "rate_limited", max(1, int(rl.RetryAfter.Seconds()))
	case errors.Is(err, zotero.ErrNotFound):
		f.Code = "refmgr_library_not_found"
	case errors.Is(err, zotero.ErrForbidden):
		f.Code = "refmgr_access_denied"
	}
	s.Failed = append(s.Failed, f)
	s.Errors = len(s.Failed)
}

// item is one (library, key) of a sync with the link rows that cite it.
type item struct {
	libID int64
	key   string
	rows  []map[string]any
}

// stale reports whether the cache of the item's rows must be refreshed
// for version: a row of another version, a detached one, or one never
// cached.
func (it item) stale(version int64) bool {
	for _, r := range it.rows {
		v, ok := pluginsdk.Int(r["refmgr_version"])
		if !ok || v != version || num(r["detached"]) != 0 {
			return true
		}
	}
	return false
}

// syncLinks refreshes the cache of rows: one request per library and 50
// keys, one citation per changed item; failures are reported per item and
// never stop the sync. progress (may be nil) hears each batch and answers
// true to stop it (the job was cancelled).
func (p *plugin) syncLinks(ctx context.Context, app string, rows []map[string]any, progress func(done, total int) (stop bool)) (syncReport, error) {
	rep := syncReport{Failed: []failure{}}
	byPair := map[[2]any]*item{}
	var items []*item
	for _, r := range rows {
		k := [2]any{num(r["lib_id"]), str(r["refmgr_key"])}
		it := byPair[k]
		if it == nil {
			it = &item{libID: num(r["lib_id"]), key: str(r["refmgr_key"])}
			byPair[k] = it
			items = append(items, it)
		}
		it.rows = append(it.rows, r)
	}
	slices.SortFunc(items, func(a, b *item) int {
		return cmp.Or(cmp.Compare(a.libID, b.libID), cmp.Compare(a.key, b.key))
	})
	rep.Total = len(items)
	if len(items) == 0 {
		return rep, nil
	}
	host, client := p.current()
	all, err := libs(ctx, host, app)
	if err != nil {
		return rep, err
	}
	done := 0
	if progress != nil && progress(0, len(items)) {
		return rep, context.Canceled
	}
	for start := 0; start < len(items); {
		if err := ctx.Err(); err != nil {
			return rep, err // cancelled or out of time: what is written stays
		}
		// A batch: up to MaxBatch items of one library.
		end := start + 1
		for end < len(items) && end-start < zotero.MaxBatch && items[end].libID == items[start].libID {
			end++
		}
		batch := items[start:end]
		start = end
		l, known := all[batch[0].libID]
		var zl zotero.Library
		var got map[string]zotero.Item
		if !known {
			err = errors.New("library deleted")
		} else if zl, err = p.open(ctx, app, l); err == nil {
			keys := make([]string, len(batch))
			for i, it := range batch {
				keys[i] = it.key
			}
			got, err = client.Batch(ctx, zl, keys)
		}
		var upsert []map[string]any
		for _, it := range batch {
			var c cached
			remote, present := got[it.key]
			switch {
			case !known:
				rep.Failed = append(rep.Failed, failure{LibID: it.libID, Key: it.key, Code: "lib_not_found"})
				rep.Errors = len(rep.Failed)
				continue
			case err != nil:
				rep.fail(it.libID, it.key, err)
				continue
			case !present:
				c = cached{gone: true}
			case !it.stale(remote.Version):
				rep.Unchanged++
				continue
			default:
				if c = p.cite(ctx, zl, l.style(), remote); c.err != nil {
					rep.fail(it.libID, it.key, c.err)
					continue
				}
			}
			if c.gone {
				rep.Detached++
			} else {
				rep.Updated++
			}
			for _, r := range it.rows {
				if c.gone && num(r["detached"]) == 1 {
					continue // already marked
				}
				row := c.columns()
				row["id"] = num(r["id"])
				upsert = append(upsert, row)
			}
		}
		if len(upsert) > 0 {
			if _, werr := host.WriteSystemRows(ctx, pluginsdk.SystemWriteInput{App: app, Table: tableLinks, Upsert: upsert}); werr != nil {
				return rep, werr
			}
		}
		done += len(batch)
		if progress != nil && progress(done, len(items)) {
			return rep, context.Canceled
		}
	}
	return rep, nil
}

// POST /refmgr/sync/:tb/:id — refreshes the links of one record.
func (p *plugin) syncRecord(w http.ResponseWriter, r *http.Request) {
	tb, id, ok := p.recordParams(w, r)
	if !ok {
		return
	}
	host, _ := p.current()
	app := pluginsdk.ActorFrom(r).App
	rows, err := readAll(r.Context(), host, app, tableLinks, map[string]any{
		"tb": map[string]any{"_eq": tb}, "record_id": map[string]any{"_eq": id}})
	if err != nil {
		hostFailed(w, err)
		return
	}
	p.answerSync(w, r, app, rows, nil)
}

// POST /refmgr/sync — refreshes every item cited in the application, one
// representative per (library, key). A job route: run by the server's job
// system, it reports its progress (items done of total) to the job.
func (p *plugin) syncAll(w http.ResponseWriter, r *http.Request) {
	host, _ := p.current()
	app := pluginsdk.ActorFrom(r).App
	rows, err := readAll(r.Context(), host, app, tableLinks, nil)
	if err != nil {
		hostFailed(w, err)
		return
	}
	var progress func(done, total int) bool
	if job := pluginsdk.JobID(r); job != "" {
		progress = func(done, total int) bool {
			cancelled, err := host.JobProgress(r.Context(), job, int64(done), int64(total))
			if err != nil {
				// Progress is for the user's eyes: a lost report does not
				// stop the sync.
				fmt.Fprintf(os.Stderr, "refmgr: job progress: %v\n", err)
			}
			return cancelled
		}
	}
	p.answerSync(w, r, app, rows, progress)
}

func (p *plugin) answerSync(w http.ResponseWriter, r *http.Request, app string, rows []map[string]any, progress func(done, total int) bool) {
	rep, err := p.syncLinks(r.Context(), app, rows, progress)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		pluginsdk.WriteError(w, http.StatusServiceUnavailable, "sync_interrupted",
			fmt.Sprintf("the sync was cancelled or ran out of time after %d of %d items; what it did is kept", rep.Updated+rep.Detached+rep.Unchanged+rep.Errors, rep.Total))
		return
	}
	if err != nil {
		hostFailed(w, err)
		return
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "total": rep.Total, "updated": rep.Updated,
		"detached": rep.Detached, "unchanged": rep.Unchanged, "errors": rep.Errors, "failed": rep.Failed})
}
