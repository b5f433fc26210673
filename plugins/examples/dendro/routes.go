package main

import (
	"net/http"
	"strconv"

	"github.com/strata-archaeo/strata/pluginsdk"
)

// page is how many records one Host.QueryRecords call reads.
const page = 5000

// eachSample reads every record of a table (as actor, or as the plugin
// when actor is nil), a page at a time, and calls fn for each.
func eachSample(r *http.Request, host pluginsdk.Host, table string, actor *pluginsdk.Actor, fn func(row map[string]any) error) (total int64, err error) {
	for offset := 0; ; offset += page {
		rows, n, err := host.QueryRecords(r.Context(), pluginsdk.QueryRecordsInput{
			App: pluginsdk.ActorFrom(r).App, Table: table, Limit: page, Offset: offset, Actor: actor,
			Columns: []string{"id", colFirst, colLast, colSapwood, colBark, colFrom, colTo},
		})
		if err != nil {
			return 0, err
		}
		for _, row := range rows {
			if err := fn(row); err != nil {
				return 0, err
			}
		}
		if len(rows) < page {
			return n, nil
		}
	}
}

// Summary is what GET /dendro/summary/{tb} answers.
type Summary struct {
	Status   string           `json:"status"`
	Samples  int64            `json:"samples"`
	Dated    int64            `json:"dated"`     // with a felling range
	Open     int64            `json:"open"`      // felled "after" a year only
	Earliest *int64           `json:"earliest"`  // earliest possible felling
	Latest   *int64           `json:"latest"`    // latest closed felling bound
	ByDecade map[string]int64 `json:"by_decade"` // samples whose range starts in each decade
}

// summary counts the samples the caller may read and their felling dates.
func (d *dendro) summary(w http.ResponseWriter, r *http.Request) {
	host, _ := d.state()
	if host == nil {
		pluginsdk.WriteError(w, http.StatusServiceUnavailable, "not_configured", "the plugin is starting")
		return
	}
	actor := pluginsdk.ActorFrom(r)
	s := Summary{Status: "success", ByDecade: map[string]int64{}}
	total, err := eachSample(r, host, pluginsdk.Param(r, "tb"), &actor, func(row map[string]any) error {
		from, ok := pluginsdk.Int(row[colFrom])
		if !ok {
			return nil
		}
		s.Dated++
		if s.Earliest == nil || from < *s.Earliest {
			s.Earliest = &from
		}
		if to, ok := pluginsdk.Int(row[colTo]); !ok {
			s.Open++
		} else if s.Latest == nil || to > *s.Latest {
			s.Latest = &to
		}
		decade := from - ((from%10)+10)%10
		s.ByDecade[strconv.FormatInt(decade, 10)]++
		return nil
	})
	if err != nil {
		pluginsdk.WriteHostError(w, err)
		return
	}
	s.Samples = total
	pluginsdk.WriteJSON(w, http.StatusOK, s)
}

// Recomputed is the result of a recomputation job.
type Recomputed struct {
	Status    string `json:"status"`
	Checked   int64  `json:"checked"`
	Updated   int64  `json:"updated"`
	Unchanged int64  `json:"unchanged"`
	Invalid   int64  `json:"invalid"` // rows whose rings the plugin refuses (left as they are)
}

// recompute writes the felling range of every sample of a table again with
// the current sapwood model (after the settings changed), as the plugin
// itself: the records' versions and history say the plugin changed them.
func (d *dendro) recompute(w http.ResponseWriter, r *http.Request) {
	host, model := d.state()
	if host == nil {
		pluginsdk.WriteError(w, http.StatusServiceUnavailable, "not_configured", "the plugin is starting")
		return
	}
	table, app, job := pluginsdk.Param(r, "tb"), pluginsdk.ActorFrom(r).App, pluginsdk.JobID(r)
	res := Recomputed{Status: "success"}
	var pending []map[string]any
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if _, err := host.UpdateRecords(r.Context(), pluginsdk.UpdateRecordsInput{App: app, Table: table, Rows: pending}); err != nil {
			return err
		}
		res.Updated += int64(len(pending))
		pending = pending[:0]
		return nil
	}
	total, err := eachSample(r, host, table, nil, func(row map[string]any) error {
		res.Checked++
		s, problems := sampleOf(row)
		if len(problems) == 0 {
			problems = s.Check()
		}
		if len(problems) > 0 {
			res.Invalid++
			return nil
		}
		f := s.Felling(model)
		if sameYear(row[colFrom], f.From) && sameYear(row[colTo], f.To) {
			res.Unchanged++
			return nil
		}
		pending = append(pending, map[string]any{"id": row["id"], colFrom: yearOrNil(f.From), colTo: yearOrNil(f.To)})
		if len(pending) >= 500 {
			if err := flush(); err != nil {
				return err
			}
			if job != "" {
				if cancelled, err := host.JobProgress(r.Context(), job, res.Checked, 0); err != nil || cancelled {
					return r.Context().Err()
				}
			}
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		pluginsdk.WriteHostError(w, err)
		return
	}
	if job != "" {
		_, _ = host.JobProgress(r.Context(), job, total, total)
	}
	pluginsdk.Logger().Info("felling dates recomputed", "app", app, "table", table,
		"checked", res.Checked, "updated", res.Updated, "invalid", res.Invalid)
	pluginsdk.WriteJSON(w, http.StatusOK, res)
}

func sameYear(stored any, y *int64) bool {
	n, ok := pluginsdk.Int(stored)
	if y == nil {
		return !ok
	}
	return ok && n == *y
}
