package fieldsync_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// Two devices edit different fields of one record from the same version:
// both edits are kept, with no conflict, in two versions.
func TestPushMergesDisjointEdits(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		id := f.create(t, "finds", `{"label":"F1","notes":"first"}`)
		a := f.push(t, f.ann, mut("tablet-a", 1, "finds", "id", id, "base_version", 0, "set", map[string]any{"label": "F1 bis"}))
		b := f.push(t, f.bo, mut("phone-b", 1, "finds", "id", id, "base_version", 0, "set", map[string]any{"notes": "second"}))
		for _, r := range []pushResult{a.Results[0], b.Results[0]} {
			if r.Status != "applied" || len(r.Conflicts) != 0 || r.ID != id {
				t.Fatalf("result %+v, want applied without conflicts", r)
			}
		}
		if got := f.field(t, "finds", id, "label"); got != "F1 bis" {
			t.Errorf("label = %v", got)
		}
		if got := f.field(t, "finds", id, "notes"); got != "second" {
			t.Errorf("notes = %v", got)
		}
		if n := f.count(t, "versions", "tb = ? AND record_id = ?", "finds", id); n != 2 {
			t.Errorf("%d versions, want 2", n)
		}
		if got := f.conflicts(t, f.super, "?status=all"); len(got) != 0 {
			t.Errorf("conflicts: %v", got)
		}
	})
}

// The same field changed on both sides: exactly one conflict, the server
// value kept; resolving it saves the chosen value, and the three values
// stay in the record's versions and in the conflict.
func TestPushConflictResolved(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		id := f.create(t, "finds", `{"label":"F1","notes":"base"}`)
		a := f.push(t, f.ann, mut("tablet-a", 1, "finds", "id", id, "base_version", 0, "set", map[string]any{"notes": "ann's"}))
		if a.Results[0].Status != "applied" {
			t.Fatalf("ann: %+v", a.Results[0])
		}
		b := f.push(t, f.bo, mut("phone-b", 1, "finds", "id", id, "base_version", 0,
			"set", map[string]any{"notes": "bob's", "label": "F1"}))
		r := b.Results[0]
		if r.Status != "conflict" || len(r.Conflicts) != 1 {
			t.Fatalf("bob: %+v, want one conflict", r)
		}
		if got := f.field(t, "finds", id, "notes"); got != "ann's" {
			t.Errorf("notes = %v, want the server's value kept", got)
		}
		list := f.conflicts(t, f.bo, "?table=finds")
		if len(list) != 1 {
			t.Fatalf("conflicts: %v", list)
		}
		c := list[0]
		if c["field"] != "notes" || c["base"] != "base" || c["mine"] != "bob's" || c["theirs"] != "ann's" ||
			c["status"] != "open" || c["device_id"] != "phone-b" || c["who"].(map[string]any)["name"] != "bob@example.org" {
			t.Errorf("conflict %v", c)
		}
		url := fmt.Sprintf("/dig/api/sync/conflicts/%d/resolve", r.Conflicts[0])
		f.must(t, 200, f.bo, "POST", url, `{"value":"bob's"}`)
		if got := f.field(t, "finds", id, "notes"); got != "bob's" {
			t.Errorf("notes = %v after the resolution", got)
		}
		f.must(t, 409, f.bo, "POST", url, `{"value":"again"}`)
		if got := f.conflicts(t, f.bo, ""); len(got) != 0 {
			t.Errorf("open conflicts after the resolution: %v", got)
		}
		done := f.conflicts(t, f.bo, "?status=resolved")
		if len(done) != 1 || done[0]["resolved_value"] != "bob's" || done[0]["theirs"] != "ann's" || done[0]["base"] != "base" {
			t.Errorf("resolved: %v", done)
		}
		// Every value stays in the versions: the base and ann's were
		// replaced, so each is a snapshot; bob's is the record now.
		for _, v := range []string{`"base"`, `"ann's"`} {
			if n := f.count(t, "versions", "tb = ? AND record_id = ? AND content LIKE ?", "finds", id, "%"+v+"%"); n == 0 {
				t.Errorf("no version holds %s", v)
			}
		}
	})
}

// Mutations that arrive before their predecessor wait for it and are then
// applied in seq order; the device's state says where it stands.
func TestPushHoldsOutOfOrder(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		later := []map[string]any{
			mut("tablet-a", 3, "finds", "temp_id", "f1", "set", map[string]any{"notes": "three"}),
			mut("tablet-a", 2, "finds", "temp_id", "f1", "set", map[string]any{"notes": "two", "weight": 2}),
		}
		first := f.push(t, f.ann, later...)
		for _, r := range first.Results {
			if r.Status != "held" {
				t.Fatalf("%+v, want held", r)
			}
		}
		dev := f.must(t, 200, f.ann, "GET", "/dig/api/sync/devices/tablet-a", "")
		if dev["last_seq"] != 0.0 || dev["held"] != 2.0 {
			t.Fatalf("device %v", dev)
		}
		// Another account's device of the same name is another device.
		if other := f.must(t, 200, f.bo, "GET", "/dig/api/sync/devices/tablet-a", ""); other["held"] != 0.0 {
			t.Errorf("bob sees ann's device: %v", other)
		}
		got := f.push(t, f.ann, mut("tablet-a", 1, "finds", "temp_id", "f1", "set", map[string]any{"label": "F", "notes": "one"}))
		id := got.TempIDs["f1"]
		if got.Results[0].Status != "applied" || id == 0 {
			t.Fatalf("create: %+v %v", got.Results[0], got.TempIDs)
		}
		if v := f.field(t, "finds", id, "notes"); v != "three" {
			t.Errorf("notes = %v, want the last in seq order", v)
		}
		if v := f.field(t, "finds", id, "weight"); v != 2.0 {
			t.Errorf("weight = %v", v)
		}
		dev = f.must(t, 200, f.ann, "GET", "/dig/api/sync/devices/tablet-a", "")
		if dev["last_seq"] != 3.0 || dev["held"] != 0.0 {
			t.Errorf("device %v", dev)
		}
		// Sent again, the held ones answer what was done with them.
		again := f.push(t, f.ann, later...)
		for _, r := range again.Results {
			if r.Status != "applied" || r.ID != id {
				t.Errorf("again: %+v", r)
			}
		}
	})
}

// A batch sent three times is applied once: the second and third answers
// are the first's, and nothing changes (no version, no change-log entry,
// no record). A find made offline pointing at a unit made offline (by
// temp_id) arrives linked.
func TestPushReplayAndTempIDs(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		batch := []map[string]any{
			mut("tablet-a", 1, "units", "temp_id", "u1", "set", map[string]any{"code": "US 7"}),
			mut("tablet-a", 2, "finds", "temp_id", "f1", "set", map[string]any{"label": "F7", "unit": map[string]any{"temp_id": "u1"}}),
			mut("tablet-a", 3, "finds", "temp_id", "f1", "set", map[string]any{"notes": "washed"}),
		}
		first := f.push(t, f.ann, batch...)
		for _, r := range first.Results {
			if r.Status != "applied" {
				t.Fatalf("%+v", r)
			}
		}
		unit, find := first.TempIDs["u1"], first.TempIDs["f1"]
		if unit == 0 || find == 0 {
			t.Fatalf("temp ids %v", first.TempIDs)
		}
		if got := f.field(t, "finds", find, "unit"); got != float64(unit) {
			t.Errorf("the find's unit is %v, want %d", got, unit)
		}
		counts := func() [4]int {
			return [4]int{f.count(t, "versions", "1 = 1"), f.count(t, "changes", "1 = 1"),
				f.count(t, "sync_mutations", "1 = 1"), f.count(t, "sync_conflicts", "1 = 1")}
		}
		before := counts()
		for range 2 {
			again := f.push(t, f.ann, batch...)
			if !reflect.DeepEqual(again, first) {
				t.Errorf("answer sent again %+v, want %+v", again, first)
			}
			if now := counts(); now != before {
				t.Errorf("counts (versions, changes, mutations, conflicts) %v after a replay, %v before", now, before)
			}
		}
		var units int
		if err := f.app.DB.QueryRow(t.Context(), `SELECT COUNT(*) FROM `+f.app.DB.Qualify("units")).Scan(&units); err != nil {
			t.Fatal(err)
		}
		if units != 1 {
			t.Errorf("%d units, want 1", units)
		}
	})
}

// A push to a row outside the caller's subset is refused exactly as one to
// a row that does not exist; the rest of the batch goes on.
func TestPushOutsideSubsetLooksMissing(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		in := f.create(t, "finds", `{"label":"in"}`)
		out := f.create(t, "finds", `{"label":"out","notes":"secret"}`)
		var annID float64
		for _, u := range f.must(t, 200, f.super, "GET", "/dig/api/users", "")["users"].([]any) {
			if u.(map[string]any)["email"] == "ann@example.org" {
				annID = u.(map[string]any)["id"].(float64)
			}
		}
		f.must(t, 200, f.super, "POST", fmt.Sprintf("/dig/api/user/%d/privileges", int64(annID)),
			`{"table_name":"finds","privilege":20,"subset":{"label":{"_eq":"in"}}}`)
		ann := testenv.Login(t, f.inst.Server, "dig", "ann@example.org", testenv.Password)
		got := f.push(t, ann,
			mut("tablet-a", 1, "finds", "id", out, "base_version", 0, "set", map[string]any{"notes": "mine"}),
			mut("tablet-a", 2, "finds", "id", 987654, "base_version", 0, "set", map[string]any{"notes": "mine"}),
			mut("tablet-a", 3, "finds", "id", out, "delete", true),
			mut("tablet-a", 4, "finds", "id", 987655, "delete", true),
			mut("tablet-a", 5, "finds", "id", in, "set", map[string]any{"notes": "kept"}),
		)
		strip := func(r pushResult) pushResult { r.MutationID, r.ID = "", 0; return r }
		for i := 0; i < 4; i += 2 {
			r1, r2 := got.Results[i], got.Results[i+1]
			if r1.Status != "refused" || r1.Code != "record_not_found" || !reflect.DeepEqual(strip(r1), strip(r2)) {
				t.Errorf("outside %+v, missing %+v: want the same refusal", r1, r2)
			}
		}
		if got.Results[4].Status != "applied" {
			t.Errorf("the rest of the batch: %+v", got.Results[4])
		}
		if v := f.field(t, "finds", out, "notes"); v != "secret" {
			t.Errorf("the outside row's notes are %v", v)
		}
		if v := f.field(t, "finds", in, "notes"); v != "kept" {
			t.Errorf("the inside row's notes are %v", v)
		}
	})
}

// A held mutation whose predecessor never comes is applied once the wait
// is over (the clock moved, a push by anyone), marked as a conflict that
// says why; sent again, it answers that.
func TestPushHoldExpires(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		id := f.create(t, "finds", `{"label":"F1"}`)
		lost := mut("tablet-a", 2, "finds", "id", id, "base_version", 0, "set", map[string]any{"notes": "after a lost one"})
		if r := f.push(t, f.ann, lost).Results[0]; r.Status != "held" {
			t.Fatalf("%+v, want held", r)
		}
		f.clock.Add(testHold / 2)
		f.push(t, f.bo, mut("phone-b", 1, "finds", "id", id, "set", map[string]any{"label": "F1"}))
		if v := f.field(t, "finds", id, "notes"); v != nil {
			t.Fatalf("applied before its wait was over: %v", v)
		}
		f.clock.Add(testHold)
		f.push(t, f.bo, mut("phone-b", 2, "finds", "id", id, "set", map[string]any{"label": "F1"}))
		if v := f.field(t, "finds", id, "notes"); v != "after a lost one" {
			t.Fatalf("notes = %v, want the held mutation applied", v)
		}
		dev := f.must(t, 200, f.ann, "GET", "/dig/api/sync/devices/tablet-a", "")
		if dev["last_seq"] != 2.0 || dev["held"] != 0.0 {
			t.Errorf("device %v", dev)
		}
		r := f.push(t, f.ann, lost).Results[0]
		if r.Status != "conflict" || len(r.Conflicts) != 1 {
			t.Fatalf("%+v, want a conflict", r)
		}
		list := f.conflicts(t, f.ann, "")
		if len(list) != 1 || list[0]["field"] != "" || !strings.Contains(list[0]["reason"].(string), "STRATA_SYNC_HOLD") {
			t.Fatalf("conflicts %v", list)
		}
		// An order conflict is ended without a value.
		f.must(t, 200, f.ann, "POST", fmt.Sprintf("/dig/api/sync/conflicts/%d/resolve", r.Conflicts[0]), `{}`)
		// The missing one arrives at last: applied over its successor,
		// and marked.
		late := f.push(t, f.ann, mut("tablet-a", 1, "finds", "id", id, "set", map[string]any{"weight": 1})).Results[0]
		if late.Status != "conflict" || len(late.Conflicts) != 1 {
			t.Errorf("late: %+v", late)
		}
	})
}

// Hostile or malformed pushes are refused whole, with a code, before
// anything is applied.
func TestPushRefusesBadInput(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSync(t, e)
		good := `{"mutation_id":"m","device_id":"d","seq":1,"table":"finds","set":{"label":"x"}}`
		many := strings.TrimSuffix(strings.Repeat(good+",", 501), ",")
		for _, c := range []struct {
			name, body string
			status     int
			code       string
		}{
			{"not JSON", `{"mutations":[`, 400, "invalid_json"},
			{"wrong type", `{"mutations":{"a":1}}`, 400, "invalid_json"},
			{"too many", `{"mutations":[` + many + `]}`, 413, "sync_too_many_mutations"},
			{"no mutation_id", `{"mutations":[{"device_id":"d","seq":1,"table":"finds"}]}`, 400, "sync_invalid_mutation"},
			{"seq 0", `{"mutations":[{"mutation_id":"m","device_id":"d","seq":0,"table":"finds"}]}`, 400, "sync_invalid_mutation"},
			{"long device", `{"mutations":[{"mutation_id":"m","device_id":"` + strings.Repeat("d", 101) + `","seq":1,"table":"finds"}]}`, 400, "sync_invalid_mutation"},
			{"id and temp_id", `{"mutations":[{"mutation_id":"m","device_id":"d","seq":1,"table":"finds","id":1,"temp_id":"t"}]}`, 400, "sync_invalid_mutation"},
			{"bad reference", `{"mutations":[{"mutation_id":"m","device_id":"d","seq":1,"table":"finds","set":{"unit":{"x":1}}}]}`, 400, "sync_invalid_mutation"},
		} {
			t.Run(c.name, func(t *testing.T) {
				code, m := f.do(t, f.ann, "POST", "/dig/api/sync/push", c.body)
				if code != c.status || m["code"] != c.code {
					t.Errorf("%d %v, want %d %s", code, m, c.status, c.code)
				}
			})
		}
		if n := f.count(t, "sync_mutations", "1 = 1"); n != 0 {
			t.Errorf("%d mutations stored from refused pushes", n)
		}
		// Refusals of one mutation: the rest goes on.
		got := f.push(t, f.ann,
			mut("d", 1, "finds", "temp_id", "f", "set", map[string]any{"label": "x", "unit": map[string]any{"temp_id": "never"}}),
			mut("d", 2, "finds", "set", map[string]any{"nope": 1}),
			mut("d", 3, "finds", "set", map[string]any{"notes": "no label"}),
			mut("d", 4, "nosuchtable", "set", map[string]any{"a": 1}),
			mut("d", 5, "finds", "set", map[string]any{"label": "ok"}),
		)
		want := []string{"sync_temp_id_unknown", "invalid_field", "validation_failed", "table_not_found", ""}
		for i, r := range got.Results {
			if r.Code != want[i] {
				t.Errorf("mutation %d: %+v, want code %q", i+1, r, want[i])
			}
		}
		if got.Results[2].Fields == nil {
			t.Errorf("a validation refusal without its field errors: %+v", got.Results[2])
		}
		if got.Results[4].Status != "applied" {
			t.Errorf("%+v", got.Results[4])
		}
	})
}
