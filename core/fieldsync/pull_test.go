package fieldsync_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestPullFirstInPages: a first pull in pages of 3 holds exactly the
// list's rows, each as the record read shows it (values, labels, plugin
// rows, files, version); the last page says up to date.
func TestPullFirstInPages(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e)
		site := d.create(t, "sites", `{"core":{"name":"Pompeii"}}`)
		var ids []int64
		for i := range 7 {
			ids = append(ids, d.find(t, fmt.Sprintf("F%d", i), "north", site))
		}
		code, m := testenv.DoMultipart(t, d.inst.Server, fmt.Sprintf("/dig/api/record/finds/%d/file", ids[2]), d.writer, nil,
			testenv.FormFile{Field: "file", Name: "note.txt", Data: []byte("a field note")})
		if code != 200 {
			t.Fatalf("upload: %d %v", code, m)
		}
		dev := &device{}
		d.sync(t, d.admin, "finds", dev, 3, "")
		if dev.pages != 3 || dev.resets != 0 {
			t.Fatalf("7 rows in pages of 3: %d pages, %d resets", dev.pages, dev.resets)
		}
		if got, want := dev.held(), d.listIDs(t, d.admin, "finds", ""); !slices.Equal(got, want) {
			t.Fatalf("held %v, list %v", got, want)
		}
		if files := dev.rows[ids[2]]["files"].([]any); len(files) != 1 {
			t.Fatalf("the file's metadata: %v", files)
		}
		d.sameAsRead(t, d.admin, "finds", dev)
		// Up to date: nothing more, and the checkpoint stays usable.
		p := d.pull(t, d.admin, "finds", dev.checkpoint, 0, "")
		if len(p.Rows) != 0 || len(p.Removed) != 0 || p.More || p.Reset {
			t.Fatalf("up to date: %+v", p)
		}
	})
}

// TestPullIncremental: after edits, a delete and a create, the next pull
// sends exactly the changed rows and the deleted id; a record created and
// deleted since is not a removal (the device never had it).
func TestPullIncremental(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e)
		site := d.create(t, "sites", `{"core":{"name":"Pompeii"}}`)
		a, b, c := d.find(t, "A", "north", site), d.find(t, "B", "north", site), d.find(t, "C", "north", site)
		dev := &device{}
		d.sync(t, d.admin, "finds", dev, 0, "")
		d.update(t, a, `{"weight":2.5}`)
		d.update(t, a, `{"label":"A2"}`)
		d.delete(t, b)
		n := d.find(t, "N", "north", site)
		ghost := d.find(t, "G", "north", site)
		d.delete(t, ghost)
		d.sync(t, d.admin, "finds", dev, 0, "")
		if want := []int64{a, n}; !slices.Equal(dev.sent, want) {
			t.Fatalf("rows sent %v, want %v (each once, in log order)", dev.sent, want)
		}
		if want := []int64{b}; !slices.Equal(dev.removed, want) {
			t.Fatalf("removed %v, want %v", dev.removed, want)
		}
		if got, want := dev.held(), []int64{a, c, n}; !slices.Equal(got, want) {
			t.Fatalf("held %v, want %v", got, want)
		}
		if v := dev.rows[a]["values"].(map[string]any); v["label"] != "A2" || v["weight"] != 2.5 {
			t.Fatalf("edited row: %v", v)
		}
		d.sameAsRead(t, d.admin, "finds", dev)
	})
}

// TestPullChangedWhilePaging: rows changed while a first pull pages (one
// already sent, one not yet) come again in the next pull: never skipped.
func TestPullChangedWhilePaging(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e)
		var ids []int64
		for i := range 5 {
			ids = append(ids, d.find(t, fmt.Sprintf("F%d", i), "north", 0))
		}
		p := d.pull(t, d.admin, "finds", "", 2, "")
		if !p.More || len(p.Rows) != 2 {
			t.Fatalf("first page: %+v", p)
		}
		d.update(t, ids[0], `{"label":"sent, then changed"}`)
		d.update(t, ids[4], `{"label":"changed before sent"}`)
		dev := &device{checkpoint: p.Checkpoint, rows: map[int64]map[string]any{}}
		d.sync(t, d.admin, "finds", dev, 2, "")
		d.sync(t, d.admin, "finds", dev, 2, "")
		if want := []int64{ids[0], ids[4]}; !slices.Equal(dev.sent, want) {
			t.Fatalf("after the first pull, sent %v, want %v", dev.sent, want)
		}
		if dev.rows[ids[0]]["values"].(map[string]any)["label"] != "sent, then changed" {
			t.Fatalf("the row changed after it was sent: %v", dev.rows[ids[0]])
		}
	})
}

// TestPullRowSubsets: two readers with different row subsets each hold
// exactly what their list shows; a row moved out of a subset arrives as a
// removal with no values; a row a reader never saw never appears in its
// removals, deleted or moved.
func TestPullRowSubsets(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e)
		site := d.create(t, "sites", `{"core":{"name":"Pompeii"}}`)
		n1, n2 := d.find(t, "N1", "north", site), d.find(t, "N2", "north", site)
		s1, s2 := d.find(t, "S1", "south", site), d.find(t, "S2", "south", site)
		east := d.find(t, "E1", "east", site)
		north, south := &device{}, &device{}
		check := func(who string, dev *device) {
			t.Helper()
			if got, want := dev.held(), d.listIDs(t, who, "finds", ""); !slices.Equal(got, want) {
				t.Fatalf("held %v, list %v", got, want)
			}
			d.sameAsRead(t, who, "finds", dev)
		}
		d.sync(t, d.north, "finds", north, 0, "")
		d.sync(t, d.south, "finds", south, 0, "")
		check(d.north, north)
		check(d.south, south)
		if !slices.Equal(north.held(), []int64{n1, n2}) {
			t.Fatalf("north holds %v", north.held())
		}
		d.update(t, n1, `{"area":"south"}`)  // north → south
		d.delete(t, s1)                      // south only
		d.update(t, east, `{"area":"west"}`) // nobody's, moved
		d.update(t, s2, `{"area":"east"}`)   // south → nobody's
		d.delete(t, east)
		d.sync(t, d.north, "finds", north, 0, "")
		d.sync(t, d.south, "finds", south, 0, "")
		check(d.north, north)
		check(d.south, south)
		if want := []int64{n1}; !slices.Equal(north.removed, want) {
			t.Fatalf("north removed %v, want %v", north.removed, want)
		}
		if want := []int64{s1, s2}; !slices.Equal(south.removed, want) {
			t.Fatalf("south removed %v, want %v (never n1 nor the east row)", south.removed, want)
		}
		if !slices.Equal(south.sent, []int64{n1}) || len(north.sent) != 0 {
			t.Fatalf("rows sent: north %v, south %v", north.sent, south.sent)
		}
	})
}

// TestPullReset: a privilege change of the caller, or a checkpoint older
// than the change log keeps, starts the pull again (reset), and the
// device ends up with the list's rows.
func TestPullReset(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e)
		for _, a := range []string{"north", "north", "south"} {
			d.find(t, "F", a, 0)
		}
		dev := &device{}
		d.sync(t, d.north, "finds", dev, 0, "")
		old := dev.checkpoint
		// The caller's subset widens: everything it holds may be wrong.
		d.setSubset(t, d.northID, `{"area":{"_in":["north","south"]}}`)
		d.sync(t, d.north, "finds", dev, 0, "")
		if dev.resets != 1 || len(dev.held()) != 3 || !slices.Equal(dev.held(), d.listIDs(t, d.north, "finds", "")) {
			t.Fatalf("after a privilege change: %d resets, holds %v", dev.resets, dev.held())
		}
		// Another user's privileges are not the caller's.
		other := &device{}
		d.sync(t, d.south, "finds", other, 0, "")
		d.setSubset(t, d.northID, `{"area":{"_eq":"north"}}`)
		d.sync(t, d.south, "finds", other, 0, "")
		if other.resets != 0 {
			t.Fatal("another user's privilege change reset the pull")
		}
		// The log trimmed past the checkpoint.
		for range 3 {
			d.find(t, "more", "north", 0)
		}
		if _, err := changes.Trim(context.Background(), d.app.DB, changes.Retention{MaxAge: time.Hour, MaxEvents: 1}, time.Now()); err != nil {
			t.Fatal(err)
		}
		fresh := &device{checkpoint: old, rows: map[int64]map[string]any{}}
		d.sync(t, d.north, "finds", fresh, 0, "")
		if fresh.resets != 1 || !slices.Equal(fresh.held(), d.listIDs(t, d.north, "finds", "")) {
			t.Fatalf("after the log was trimmed: %d resets, holds %v", fresh.resets, fresh.held())
		}
	})
}

// TestPullFilter: a filter narrows the rows as the list's filter does; a
// row leaving the filter is a removal, one that never matched is not; a
// checkpoint of another filter starts again.
func TestPullFilter(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e)
		a, b := d.find(t, "A", "north", 0), d.find(t, "B", "north", 0)
		c := d.find(t, "C", "north", 0)
		d.update(t, c, `{"weight":50}`)
		heavy := `{"weight":{"_gt":10}}`
		d.update(t, a, `{"weight":20}`)
		dev := &device{}
		d.sync(t, d.north, "finds", dev, 0, heavy)
		if got, want := dev.held(), d.listIDs(t, d.north, "finds", heavy); !slices.Equal(got, want) || len(want) != 2 {
			t.Fatalf("filtered: held %v, list %v", got, want)
		}
		d.update(t, c, `{"weight":1}`) // leaves the filter
		d.delete(t, b)                 // never matched
		d.sync(t, d.north, "finds", dev, 0, heavy)
		if !slices.Equal(dev.removed, []int64{c}) || !slices.Equal(dev.held(), []int64{a}) {
			t.Fatalf("removed %v, held %v", dev.removed, dev.held())
		}
		d.sync(t, d.north, "finds", dev, 0, `{"weight":{"_gt":0}}`)
		if dev.resets != 1 || !slices.Equal(dev.held(), d.listIDs(t, d.north, "finds", `{"weight":{"_gt":0}}`)) {
			t.Fatalf("another filter: %d resets, held %v", dev.resets, dev.held())
		}
	})
}

// TestPullHostile: bad inputs answer a code and a status, and a table the
// caller may not read (or that does not exist) answers exactly as GET
// /records/{tb} does.
func TestPullHostile(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e)
		d.find(t, "A", "north", 0)
		good := d.pull(t, d.admin, "finds", "", 0, "").Checkpoint
		for _, s := range []testenv.Scenario{
			{Name: "checkpoint not ours", URL: "/dig/api/sync/finds?checkpoint=abc", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_parameter"`, `"parameter":"checkpoint"`}},
			{Name: "checkpoint of another format", URL: "/dig/api/sync/finds?checkpoint=" + url.QueryEscape("MnguMS4x"), ExpectedStatus: 400, ExpectedContent: []string{`"parameter":"checkpoint"`}},
			{Name: "checkpoint too long", URL: "/dig/api/sync/finds?checkpoint=" + good + good + good + good + good + good + good + good + good + good, ExpectedStatus: 400, ExpectedContent: []string{`"parameter":"checkpoint"`}},
			{Name: "limit 0", URL: "/dig/api/sync/finds?limit=0", ExpectedStatus: 400, ExpectedContent: []string{`"parameter":"limit"`}},
			{Name: "limit huge", URL: "/dig/api/sync/finds?limit=99999999999999999999", ExpectedStatus: 400, ExpectedContent: []string{`"parameter":"limit"`}},
			{Name: "limit not a number", URL: "/dig/api/sync/finds?limit=ten", ExpectedStatus: 400, ExpectedContent: []string{`"parameter":"limit"`}},
			{Name: "bad filter", URL: "/dig/api/sync/finds?filter=" + url.QueryEscape(`{"label":`), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_filter"`}},
			{Name: "unknown field in filter", URL: "/dig/api/sync/finds?filter=" + url.QueryEscape(`{"colour":{"_eq":"red"}}`), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
		} {
			s.Headers = testenv.Bearer(d.admin)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, d.inst.Server) })
		}
		// As the list answers: unknown table, a table the caller may not
		// read, no caller at all.
		for _, c := range []struct{ name, who, tb string }{
			{"unknown table", d.admin, "nowhere"}, {"table denied", d.readerNoRead, "finds"}, {"no caller", "", "finds"},
		} {
			t.Run(c.name, func(t *testing.T) {
				lc, lm := d.do(t, c.who, "GET", "/dig/api/records/"+c.tb, "")
				sc, sm := d.do(t, c.who, "GET", "/dig/api/sync/"+c.tb, "")
				if lc != sc || lm["code"] != sm["code"] || lc < 400 {
					t.Fatalf("list %d %v, pull %d %v", lc, lm, sc, sm)
				}
			})
		}
	})
}
