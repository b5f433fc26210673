package changes_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// dig is an app with a table finds (label, weight) and a plugin table
// finds_samples, and a writer's scope on finds.
func dig(t *testing.T, e store.Engine) (*apps.App, func() *records.Scope) {
	t.Helper()
	a := testenv.NewApp(t, testenv.NewRegistry(t, e), "dig")
	ctx, now := context.Background(), time.Now().UTC()
	for _, td := range []struct {
		def    schema.TableDef
		fields []schema.FieldDef
	}{
		{schema.TableDef{Name: "finds", Label: "Finds"}, []schema.FieldDef{{Name: "label", Label: "Label"}, {Name: "weight", Label: "Weight", DBType: "float"}}},
		{schema.TableDef{Name: "finds_samples", Label: "Samples", PluginOf: "finds"}, []schema.FieldDef{{Name: "lab", Label: "Lab"}}},
	} {
		if _, err := schema.CreateTable(ctx, a.DB, td.def, now); err != nil {
			t.Fatal(err)
		}
		for _, fd := range td.fields {
			if _, err := schema.AddField(ctx, a.DB, td.def.Name, fd, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	return a, func() *records.Scope {
		cat, err := schema.Load(ctx, a.DB)
		if err != nil {
			t.Fatal(err)
		}
		tb, _ := cat.Table("finds")
		return &records.Scope{DB: a.DB, Catalog: cat, Table: tb, Actor: &auth.Actor{UserID: 1, Privilege: auth.Writer}, Level: auth.Writer}
	}
}

func since(t *testing.T, db *store.DB, after int64) []changes.Change {
	t.Helper()
	got, err := changes.Since(context.Background(), db, after, 100000)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// saveRolledBack saves a record in a transaction that then rolls back.
func saveRolledBack(t *testing.T, db *store.DB, sc *records.Scope) {
	t.Helper()
	ctx := context.Background()
	_ = db.Tx(ctx, func(tx *store.DB) error {
		ts := *sc
		ts.DB = tx
		if _, _, err := records.Save(ctx, &ts, records.SaveInput{Core: map[string]any{"label": "gone"}}); err != nil {
			t.Fatal(err)
		}
		return fmt.Errorf("roll back")
	})
}

func head(t *testing.T, db *store.DB) int64 {
	t.Helper()
	_, newest, err := changes.Bounds(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return newest
}

// TestEveryWritePathLogsOneChange: each write path of the records package
// (save, plugin rows, batch, delete, restore, duplicate), the schema and
// privileges leave exactly the rows a reader expects, with the record's
// version and who made the change; a failed save leaves none.
func TestEveryWritePathLogsOneChange(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		a, scope := dig(t, e)
		ctx := context.Background()
		sc := scope()
		type row struct {
			tb   string
			id   int64
			op   changes.Op
			user int64
		}
		expect := func(after int64, want ...row) int64 {
			t.Helper()
			got := since(t, a.DB, after)
			if len(got) != len(want) {
				t.Fatalf("after %d: %d changes %+v, want %d %+v", after, len(got), got, len(want), want)
			}
			for i, w := range want {
				g := got[i]
				if g.Table != w.tb || g.RecordID != w.id || g.Op != w.op || g.UserID != w.user {
					t.Fatalf("change %d: %+v, want %+v", i, g, w)
				}
				if i > 0 && g.ID <= got[i-1].ID {
					t.Fatalf("ids not increasing: %+v", got)
				}
				if w.op == changes.Update || w.op == changes.Delete {
					if g.Version == 0 {
						t.Fatalf("change %d: no version: %+v", i, g)
					}
				}
			}
			if len(got) == 0 {
				return after
			}
			return got[len(got)-1].ID
		}
		last := head(t, a.DB)

		// A create with a plugin row is one create.
		id, _, err := records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"label": "A"},
			Plugins: map[string][]records.PluginRowInput{"finds_samples": {{Fields: map[string]any{"lab": "x"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		last = expect(last, row{"finds", id, changes.Create, 1})

		// An update carries the version the record now has.
		res, err := records.SaveVersioned(ctx, sc, records.SaveInput{ID: id, Core: map[string]any{"weight": 2.5}})
		if err != nil {
			t.Fatal(err)
		}
		got := since(t, a.DB, last)
		if len(got) != 1 || got[0].Version != res.Version {
			t.Fatalf("update: %+v, want version %d", got, res.Version)
		}
		last = got[0].ID

		// A plugin row saved on its own is an update of its record.
		pt, _ := sc.Catalog.Table("finds_samples")
		if _, err := records.SavePluginRow(ctx, sc, pt, records.SaveInput{Core: map[string]any{"id_link": id, "lab": "y"}}); err != nil {
			t.Fatal(err)
		}
		last = expect(last, row{"finds", id, changes.Update, 1})

		// A failed save writes nothing.
		if _, _, err := records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"weight": "heavy"}}); err == nil {
			t.Fatal("a bad weight was saved")
		}
		last = expect(last)

		// A batch: one row per record, in one transaction.
		var ids []int64
		err = a.DB.Tx(ctx, func(tx *store.DB) error {
			b := records.NewBatch(tx)
			for i := range 3 {
				nid, fes, err := b.Save(ctx, sc, &records.SaveInput{Core: map[string]any{"label": fmt.Sprint("B", i)}}, nil)
				if err != nil || len(fes) > 0 {
					return fmt.Errorf("%v %v", err, fes)
				}
				ids = append(ids, nid)
			}
			if _, fes, err := b.Save(ctx, sc, &records.SaveInput{ID: ids[0], Core: map[string]any{"label": "B0'"}}, nil); err != nil || len(fes) > 0 {
				return fmt.Errorf("%v %v", err, fes)
			}
			if err := b.Delete(ctx, sc, ids[1]); err != nil {
				return err
			}
			return b.Finish(ctx)
		})
		if err != nil {
			t.Fatal(err)
		}
		last = expect(last, row{"finds", ids[0], changes.Create, 1}, row{"finds", ids[1], changes.Delete, 1}, row{"finds", ids[2], changes.Create, 1})

		// Delete, then restore the deleted record: a create again.
		if _, err := records.Delete(ctx, sc, []int64{id}); err != nil {
			t.Fatal(err)
		}
		last = expect(last, row{"finds", id, changes.Delete, 1})
		vs, err := records.Deleted(ctx, sc)
		if err != nil || len(vs) == 0 {
			t.Fatalf("deleted versions: %v %v", vs, err)
		}
		for _, v := range vs {
			if v.RecordID == id {
				if _, err := records.Restore(ctx, sc, v.ID, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		last = expect(last, row{"finds", id, changes.Create, 1})
		dup, err := records.Duplicate(ctx, sc, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		last = expect(last, row{"finds", dup, changes.Create, 1})

		// A change made by a plugin names it, without a user.
		psc := scope()
		psc.Actor, psc.SystemActor = &auth.Actor{}, "plugin:osteo"
		if _, err := records.SaveVersioned(ctx, psc, records.SaveInput{ID: dup, Core: map[string]any{"label": "P"}}); err != nil {
			t.Fatal(err)
		}
		got = since(t, a.DB, last)
		if len(got) != 1 || got[0].Actor != "plugin:osteo" || got[0].UserID != 0 {
			t.Fatalf("plugin save: %+v", got)
		}
		last = got[0].ID

		// The schema and a privilege.
		if _, err := schema.AddField(ctx, a.DB, "finds", schema.FieldDef{Name: "note", Label: "Note"}, time.Now()); err != nil {
			t.Fatal(err)
		}
		last = expect(last, row{"", 0, changes.Schema, 0})
		u := testenv.NewUser(t, a, "Reader", "reader@example.org", auth.Reader)
		last = head(t, a.DB)
		if err := auth.SaveTablePrivilege(ctx, a.DB, &auth.TablePrivilege{UserID: u.ID, TableName: "finds", Privilege: auth.Reader}, time.Now()); err != nil {
			t.Fatal(err)
		}
		expect(last, row{"", u.ID, changes.Privilege, 0})
	})
}

// TestConcurrentWritersNoIDSkipped: many writers commit concurrently while
// a reader polls the log as realtime does (WHERE id > last): every id the
// log ends with was seen by the reader, in increasing order. On PostgreSQL
// this is what the change-log lock buys (ids drawn in commit order); the
// sleep inside each transaction makes overlapping ones likely.
func TestConcurrentWritersNoIDSkipped(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		a, scope := dig(t, e)
		ctx := context.Background()
		start := head(t, a.DB)
		const writers, each = 8, 15
		var done atomic.Bool
		seen := map[int64]bool{}
		var readErr error
		var rwg sync.WaitGroup
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			last := start
			for {
				final := done.Load()
				got, err := changes.Since(ctx, a.DB, last, 1000)
				if err != nil {
					readErr = err
					return
				}
				for _, c := range got {
					if c.ID <= last {
						readErr = fmt.Errorf("id %d after %d", c.ID, last)
						return
					}
					seen[c.ID], last = true, c.ID
				}
				if final && len(got) == 0 {
					return
				}
			}
		}()
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sc := scope()
				for i := range each {
					err := a.DB.Tx(ctx, func(tx *store.DB) error {
						ts := *sc
						ts.DB = tx
						if _, _, err := records.Save(ctx, &ts, records.SaveInput{Core: map[string]any{"label": fmt.Sprint(w, "-", i)}}); err != nil {
							return err
						}
						time.Sleep(time.Duration(i%3) * time.Millisecond)
						return nil
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		done.Store(true)
		rwg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if readErr != nil {
			t.Fatal(readErr)
		}
		all := since(t, a.DB, start)
		if len(all) != writers*each {
			t.Fatalf("%d changes, want %d", len(all), writers*each)
		}
		for _, c := range all {
			if !seen[c.ID] {
				t.Fatalf("the reader skipped change %d", c.ID)
			}
		}
	})
}

// TestTrimKeepsTheWindow: Trim keeps the newest MaxEvents rows (and never
// the newest one away), drops rows older than MaxAge, and Missed tells a
// reader behind the window from one within it.
func TestTrimKeepsTheWindow(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		a, scope := dig(t, e)
		ctx := context.Background()
		sc := scope()
		for i := range 20 {
			if _, _, err := records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"label": fmt.Sprint(i)}}); err != nil {
				t.Fatal(err)
			}
		}
		_, newest, _ := changes.Bounds(ctx, a.DB)
		n, err := changes.Trim(ctx, a.DB, changes.Retention{MaxAge: time.Hour, MaxEvents: 5}, time.Now())
		if err != nil || n == 0 {
			t.Fatalf("trimmed %d: %v", n, err)
		}
		oldest, newest2, _ := changes.Bounds(ctx, a.DB)
		if newest2 != newest || oldest != newest-4 {
			t.Fatalf("bounds %d..%d, want %d..%d", oldest, newest2, newest-4, newest)
		}
		for _, tc := range []struct {
			after  int64
			missed bool
		}{{newest - 20, true}, {oldest - 2, true}, {oldest - 1, false}, {newest - 1, false}, {newest, false}, {newest + 1, true}} {
			if got := changes.Missed(tc.after, oldest, newest); got != tc.missed {
				t.Errorf("Missed(%d) in %d..%d = %v", tc.after, oldest, newest, got)
			}
		}
		// Everything older than MaxAge goes, but the newest row stays.
		if _, err := changes.Trim(ctx, a.DB, changes.Retention{MaxAge: time.Minute, MaxEvents: 1000}, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		oldest, newest2, _ = changes.Bounds(ctx, a.DB)
		if oldest != newest || newest2 != newest {
			t.Fatalf("after the age trim: %d..%d, want only %d", oldest, newest2, newest)
		}
	})
}

// TestWatchWakesOnCommitOnly: a committed change wakes the app's watchers;
// a rolled-back one does not.
func TestWatchWakesOnCommitOnly(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		a, scope := dig(t, e)
		ctx := context.Background()
		ch, stop := changes.Watch(a.DB.Key())
		defer stop()
		sc := scope()
		saveRolledBack(t, a.DB, sc)
		select {
		case <-ch:
			t.Fatal("woken by a rolled-back change")
		case <-time.After(50 * time.Millisecond):
		}
		if _, _, err := records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"label": "kept"}}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("not woken by a commit")
		}
	})
}

// TestCommitsAreToldToOtherNodes (PostgreSQL): other nodes hear of an
// app's commits on NotifyChannel, "<schema>:<last id>", sent after the
// commit (the id is in the log when heard), never for a rolled-back
// transaction, and the log's head is told once concurrent saves are done.
func TestCommitsAreToldToOtherNodes(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	a, scope := dig(t, store.Postgres)
	ctx := context.Background()
	url, _ := testenv.PostgresURL()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `LISTEN `+changes.NotifyChannel); err != nil {
		t.Fatal(err)
	}
	// hear returns the ids told for this app until want is told or the
	// wait ends.
	hear := func(want int64, wait time.Duration) []int64 {
		t.Helper()
		var ids []int64
		deadline := time.Now().Add(wait)
		for {
			wctx, cancel := context.WithDeadline(ctx, deadline)
			n, err := conn.WaitForNotification(wctx)
			cancel()
			if err != nil {
				return ids
			}
			schemaName, idText, _ := strings.Cut(n.Payload, ":")
			if schemaName != a.DB.Schema() {
				continue // another test's app
			}
			id, err := strconv.ParseInt(idText, 10, 64)
			if err != nil {
				t.Fatalf("payload %q", n.Payload)
			}
			// Sent after the commit: the id is in the log.
			if got := since(t, a.DB, id-1); len(got) == 0 || got[0].ID != id {
				t.Fatalf("told %d, the log has %v", id, got)
			}
			ids = append(ids, id)
			if id == want {
				return ids
			}
		}
	}

	sc := scope()
	saveRolledBack(t, a.DB, sc)
	if _, _, err := records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"label": "one"}}); err != nil {
		t.Fatal(err)
	}
	// The app's setup (its tables: the log's first rows) may still be
	// told first; the rolled-back save never is (its id is not in the log).
	first := head(t, a.DB)
	if got := hear(first, 5*time.Second); len(got) == 0 || got[len(got)-1] != first {
		t.Fatalf("told %v after one commit (and one rollback), want it to end with %d", got, first)
	}

	const writers, each = 8, 10
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, _, err := records.Save(ctx, scope(), records.SaveInput{Core: map[string]any{"label": "many"}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	last := head(t, a.DB)
	got := hear(last, 5*time.Second)
	if len(got) == 0 || got[len(got)-1] != last {
		t.Fatalf("told %v, never the head %d", got, last)
	}
	t.Logf("%d commits told in %d notifications", writers*each, len(got))
}
