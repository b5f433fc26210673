package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestRestoreNeverReusesIDs: restoring a deleted record puts its id back,
// and the next new record still gets an id never handed out before, even
// when the highest id belonged to a record that stays deleted.
func TestRestoreNeverReusesIDs(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		low := f.create(t, f.super, "sites", `{"name":"Low"}`)
		high := f.create(t, f.super, "sites", `{"name":"High"}`)
		for _, id := range []int64{high, low} {
			if code, m := f.do(t, f.super, "DELETE", fmt.Sprintf("/dig/api/record/sites/%d", id), ""); code != 200 {
				t.Fatalf("delete %d: %d %v", id, code, m)
			}
		}
		_, del := f.do(t, f.super, "GET", "/dig/api/record/sites/deleted", "")
		var vid any
		for _, d := range del["deleted"].([]any) {
			if d := d.(map[string]any); fmt.Sprint(d["record_id"]) == fmt.Sprint(low) || fmt.Sprint(d["rec_id"]) == fmt.Sprint(low) {
				vid = d["id"]
			}
		}
		if vid == nil {
			t.Fatalf("no deleted version of %d: %v", low, del)
		}
		if code, m := f.do(t, f.super, "POST", fmt.Sprintf("/dig/api/version/%v/restore", vid), `{}`); code != 200 {
			t.Fatalf("restore: %d %v", code, m)
		}
		if next := f.create(t, f.super, "sites", `{"name":"Next"}`); next <= high {
			t.Fatalf("a new record got id %d, at or below %d, which was handed out before", next, high)
		}
	})
}
