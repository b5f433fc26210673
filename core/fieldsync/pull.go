package fieldsync

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/records"
)

// Page sizes of a pull (rows of a first pull, log rows of an incremental
// one).
const (
	defaultPullLimit = 500
	maxPullLimit     = 1000
)

func (h *handlers) pullRoutes() []api.Route {
	return []api.Route{
		// :tb in the path: the route table's gate checks the caller's level
		// on it, as for GET /records/{tb}; the rows come through the
		// records scope.
		{Scope: api.App, Method: http.MethodGet, Path: "/sync/:tb", Access: auth.Read, Handler: h.pull, ReadOnly: true},
	}
}

// pullAnswer is one page of a pull.
type pullAnswer struct {
	rows       []*records.SyncRow
	removed    []int64
	checkpoint checkpoint
	more       bool
	reset      bool
}

// GET /sync/{tb}?checkpoint=&limit=&filter= — the rows of tb that changed
// since the checkpoint as the caller may read them, the ids that left the
// caller's view, and the next checkpoint (docs/sync.md).
func (h *handlers) pull(c *gin.Context) {
	sc, err := h.Host.RecordScope(c, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	limit, err := pullLimit(c.Query("limit"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	// The filter as GET /records/{tb} reads it from the query string.
	where, err := h.Host.Condition(c, sc, nil, "")
	if err != nil {
		api.Fail(c, err)
		return
	}
	from, resuming, err := decodeCheckpoint(c.Query("checkpoint"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	ans, err := h.pullPage(c, sc, where, from, resuming, limit)
	if err != nil {
		api.Fail(c, err)
		return
	}
	rows := make([]any, len(ans.rows))
	for i, r := range ans.rows {
		rows[i] = rowJSON(r)
	}
	removed := ans.removed
	if removed == nil {
		removed = []int64{}
	}
	api.Success(c, http.StatusOK, gin.H{"table": sc.Table.Name, "rows": rows, "removed": removed,
		"checkpoint": ans.checkpoint.encode(), "more": ans.more, "reset": ans.reset})
}

// pullPage decides where the pull stands (a first pull, its next page, an
// incremental pull, or a reset to a first pull) and reads that page.
func (h *handlers) pullPage(c *gin.Context, sc *records.Scope, where *records.Cond, from checkpoint, resuming bool, limit int) (pullAnswer, error) {
	ctx := c.Request.Context()
	db := sc.DB
	// The head is read before any row: a change committed after it has a
	// higher id, so the next incremental pull sends it again, whatever
	// this page read.
	oldest, newest, err := changes.Bounds(ctx, db)
	if err != nil {
		return pullAnswer{}, err
	}
	key := filterKey(where)
	reset := false
	if resuming {
		switch {
		case from.Filter != key, changes.Missed(from.Head, oldest, newest):
			// Another filter, or rows the log no longer keeps (or another
			// database's checkpoint): what the device holds cannot be
			// brought up to date.
			reset = true
		default:
			changed, err := accessChanged(ctx, db, sc.Actor, sc.Table.Name, from.Head, newest)
			if err != nil {
				return pullAnswer{}, err
			}
			reset = changed
		}
	}
	if !resuming || reset {
		from = checkpoint{Head: newest, Paging: true, Filter: key}
	}
	var ans pullAnswer
	if from.Paging {
		ans, err = firstPullPage(ctx, sc, where, from, limit)
	} else {
		ans, err = incrementalPage(ctx, sc, where, from, newest, limit)
	}
	ans.reset = reset
	return ans, err
}

// pullLimit reads limit: 1..maxPullLimit, default defaultPullLimit.
func pullLimit(v string) (int, error) {
	if v == "" {
		return defaultPullLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPullLimit {
		return 0, records.ErrInvalidParameter.With("parameter", "limit").
			With("detail", "a whole number from 1 to "+strconv.Itoa(maxPullLimit))
	}
	return n, nil
}

// rowJSON is a row as the answer encodes it (plain maps and lists: the
// answer's encoder writes them without reflection).
func rowJSON(r *records.SyncRow) map[string]any {
	plugins := make(map[string]any, len(r.Plugins))
	for name, rows := range r.Plugins {
		plugins[name] = rows
	}
	out := map[string]any{"id": r.ID, "version": r.Version, "values": r.Values, "labels": r.Labels,
		"plugins": plugins, "files": r.Files}
	if r.RS != nil {
		out["rs"] = r.RS
	}
	return out
}
