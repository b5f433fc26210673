package fieldsync_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// withRS turns stratigraphic relations on for units.
func (f *syncFixture) withRS(t *testing.T) {
	t.Helper()
	if _, err := schema.PutTable(context.Background(), f.app.DB, "units", schema.TableConfig{RS: schema.RSOn(true)}, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
}

// rsOf is a record's "rs" section as GET /record shows it: relation id →
// {first, relation, second}.
func (f *syncFixture) rsOf(t *testing.T, who string, id int64) map[string][3]int64 {
	t.Helper()
	m := f.must(t, 200, who, "GET", fmt.Sprintf("/dig/api/record/units/%d", id), "")
	return relations(m["rs"])
}

func relations(v any) map[string][3]int64 {
	out := map[string][3]int64{}
	rs, _ := v.(map[string]any)
	for k, x := range rs {
		r := x.(map[string]any)
		out[k] = [3]int64{int64(r["first"].(float64)), int64(r["relation"].(float64)), int64(r["second"].(float64))}
	}
	return out
}

// A unit created offline and related (by its temp_id) to an existing one:
// the relation is the route's, in both records' read and pull; replaying
// the batch changes nothing; a delete by relation id removes it.
func TestPushRelations(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		f.withRS(t)
		old := f.create(t, "units", `{"code":"US 1"}`)
		batch := []map[string]any{
			mut("tablet-a", 1, "units", "temp_id", "u-new", "set", map[string]any{"code": "US 9"}),
			mut("tablet-a", 2, "units", "rs", map[string]any{"add": map[string]any{"first": map[string]any{"temp_id": "u-new"}, "relation": 1, "second": old}}),
		}
		first := f.push(t, f.ann, batch...)
		made, rel := first.TempIDs["u-new"], first.Results[1]
		if first.Results[0].Status != "applied" || rel.Status != "applied" || rel.ID == 0 || made == 0 {
			t.Fatalf("push: %+v", first)
		}
		relKey := fmt.Sprint(rel.ID)
		if got, want := f.rsOf(t, f.ann, old), map[string][3]int64{relKey: {old, 5, made}}; !reflect.DeepEqual(got, want) {
			t.Errorf("rs of the existing unit: %v, want %v (seen from it: covers)", got, want)
		}
		// The pull carries each row's relations as the read shows them.
		page := f.must(t, 200, f.ann, "GET", "/dig/api/sync/units", "")
		related := 0
		for _, row := range page["rows"].([]any) {
			r := row.(map[string]any)
			id := int64(r["id"].(float64))
			got := relations(r["rs"])
			if want := f.rsOf(t, f.ann, id); !reflect.DeepEqual(got, want) {
				t.Errorf("pull of unit %d: rs %v, the read's %v", id, got, want)
			}
			related += len(got)
		}
		if related != 2 {
			t.Errorf("the pull shows the relation %d times, want 2 (from each end)", related)
		}
		for range 2 {
			again := f.push(t, f.ann, batch...)
			if !reflect.DeepEqual(again.Results, first.Results) {
				t.Errorf("replay: %+v, want %+v", again.Results, first.Results)
			}
		}
		if n := f.count(t, "rs", "tb = ?", "units"); n != 1 {
			t.Errorf("%d relations after replays, want 1", n)
		}
		del := f.push(t, f.ann, mut("tablet-a", 3, "units", "rs", map[string]any{"delete": rel.ID}))
		if r := del.Results[0]; r.Status != "applied" || r.ID != rel.ID {
			t.Fatalf("delete: %+v", r)
		}
		if n := f.count(t, "rs", "tb = ?", "units"); n != 0 {
			t.Errorf("%d relations after the delete", n)
		}
		// The same relation again: the route's code.
		dup := f.push(t, f.ann,
			mut("tablet-a", 4, "units", "rs", map[string]any{"add": map[string]any{"first": old, "relation": 2, "second": made}}),
			mut("tablet-a", 5, "units", "rs", map[string]any{"add": map[string]any{"first": made, "relation": 6, "second": old}}))
		if dup.Results[0].Status != "applied" || dup.Results[1].Status != "refused" || dup.Results[1].Code != "relation_already_exist" {
			t.Errorf("a relation twice: %+v", dup.Results)
		}
	})
}

// A relation to a record outside the caller's subset is refused as one to
// a missing record; relation mutations of a wrong shape refuse the push.
func TestPushRelationRefused(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		f.withRS(t)
		in := f.create(t, "units", `{"code":"in"}`)
		in2 := f.create(t, "units", `{"code":"in"}`)
		out := f.create(t, "units", `{"code":"out"}`)
		f.must(t, 200, f.super, "POST", fmt.Sprintf("/dig/api/user/%d/privileges", f.userID(t, "ann@example.org")),
			`{"table_name":"units","privilege":20,"subset":{"code":{"_eq":"in"}}}`)
		ann := testenv.Login(t, f.inst.Server, "dig", "ann@example.org", testenv.Password)
		add := func(seq int, a, b any) map[string]any {
			return mut("tablet-a", seq, "units", "rs", map[string]any{"add": map[string]any{"first": a, "relation": 7, "second": b}})
		}
		got := f.push(t, ann, add(1, in, out), add(2, in, 987654), add(3, out, in), add(4, in, map[string]any{"temp_id": "never"}), add(5, in, in2))
		hidden, missing := got.Results[0], got.Results[1]
		if hidden.Status != "refused" || hidden.Code != "record_not_found" || hidden.Code != missing.Code ||
			hidden.Message != missing.Message || hidden.ID != 0 || got.Results[2].Code != "record_not_found" {
			t.Errorf("outside the subset %+v, missing %+v, from outside %+v", hidden, missing, got.Results[2])
		}
		if r := got.Results[3]; r.Status != "refused" || r.Code != "sync_temp_id_unknown" {
			t.Errorf("unknown temp_id: %+v", r)
		}
		if r := got.Results[4]; r.Status != "applied" {
			t.Errorf("inside the subset: %+v", r)
		}
		if n := f.count(t, "rs", "tb = ?", "units"); n != 1 {
			t.Errorf("%d relations, want 1", n)
		}
		for _, c := range []struct {
			name string
			m    map[string]any
		}{
			{"add and delete", mut("d", 1, "units", "rs", map[string]any{"add": map[string]any{"first": in, "relation": 1, "second": in2}, "delete": 3})},
			{"neither", mut("d", 1, "units", "rs", map[string]any{})},
			{"with set", mut("d", 1, "units", "rs", map[string]any{"delete": 3}, "set", map[string]any{"code": "x"})},
			{"with id", mut("d", 1, "units", "id", in, "rs", map[string]any{"delete": 3})},
			{"relation code", mut("d", 1, "units", "rs", map[string]any{"add": map[string]any{"first": in, "relation": 11, "second": in2}})},
			{"bad end", mut("d", 1, "units", "rs", map[string]any{"add": map[string]any{"first": "US 1", "relation": 1, "second": in2}})},
			{"missing end", mut("d", 1, "units", "rs", map[string]any{"add": map[string]any{"first": in, "relation": 1}})},
			{"negative delete", mut("d", 1, "units", "rs", map[string]any{"delete": -2})},
		} {
			code, m := f.pushRaw(t, ann, c.m)
			if code != 400 || m["code"] != "sync_invalid_mutation" {
				t.Errorf("%s: %d %v", c.name, code, m)
			}
		}
	})
}

// On a strict table a relation mutation that would close a cycle is
// refused alone (rs_cycle, with the path), the batch's others applied.
func TestPushRelationCycleRefused(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		if _, err := schema.PutTable(context.Background(), f.app.DB, "units", schema.TableConfig{RS: schema.RSOn(true), IDField: schema.Set("code")}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		a := f.create(t, "units", `{"code":"US 1"}`)
		b := f.create(t, "units", `{"code":"US 2"}`)
		c := f.create(t, "units", `{"code":"US 3"}`)
		above := func(seq int, x, y int64) map[string]any {
			return mut("tablet-a", seq, "units", "rs", map[string]any{"add": map[string]any{"first": x, "relation": 5, "second": y}})
		}
		got := f.push(t, f.ann, above(1, a, b), above(2, b, c), above(3, c, a), above(4, a, c))
		var codes []string
		for _, r := range got.Results {
			codes = append(codes, r.Status+":"+r.Code)
		}
		if want := []string{"applied:", "applied:", "refused:rs_cycle", "applied:"}; !reflect.DeepEqual(codes, want) {
			t.Fatalf("results %v, want %v (%+v)", codes, want, got.Results)
		}
		if r := got.Results[2]; r.PathText != "US 3 → US 1 → US 2 → US 3" || r.ID != 0 {
			t.Errorf("refusal: %+v", r)
		}
		if n := f.count(t, "rs", "tb = ?", "units"); n != 3 {
			t.Errorf("%d relations, want 3", n)
		}
	})
}

// A relation mutation waits for its predecessor like any other: sent
// before the creation it names, it is held, then applied after it.
func TestPushRelationHeldInOrder(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		f.withRS(t)
		old := f.create(t, "units", `{"code":"US 1"}`)
		rel := mut("tablet-a", 2, "units", "rs", map[string]any{"add": map[string]any{"first": old, "relation": 4, "second": map[string]any{"temp_id": "u-new"}}})
		if r := f.push(t, f.ann, rel).Results[0]; r.Status != "held" {
			t.Fatalf("sent first: %+v, want held", r)
		}
		got := f.push(t, f.ann, mut("tablet-a", 1, "units", "temp_id", "u-new", "set", map[string]any{"code": "US 9"}), rel)
		if got.Results[0].Status != "applied" || got.Results[1].Status != "applied" || got.Results[1].ID == 0 {
			t.Fatalf("after its predecessor: %+v", got.Results)
		}
		want := map[string][3]int64{fmt.Sprint(got.Results[1].ID): {old, 4, got.TempIDs["u-new"]}}
		if rs := f.rsOf(t, f.super, old); !reflect.DeepEqual(rs, want) {
			t.Errorf("rs %v, want %v", rs, want)
		}
	})
}
