package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestManualLinkKeyIsTheLinkID: the POST answer and the full record's
// manualLinks carry the link's integer id, the one DELETE takes.
func TestManualLinkKeyIsTheLinkID(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		site := f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		unit := f.create(t, f.super, "units", `{"code":"US 1"}`)
		code, m := f.do(t, f.writer, "POST", "/dig/api/manual-link",
			fmt.Sprintf(`{"tb_one":"sites","id_one":%d,"tb_two":"units","id_two":%d}`, site, unit))
		if code != 200 || m["code"] != "all_links_saved" {
			t.Fatalf("manual link: %d %v", code, m)
		}
		link, _ := m["link"].(map[string]any)
		id, ok := link["id"].(float64)
		if !ok || id <= 0 || link["key"] != id {
			t.Fatalf("link in the answer must carry the integer id as id and key: %v", m)
		}
		for _, at := range []string{fmt.Sprintf("sites/%d", site), fmt.Sprintf("units/%d", unit)} {
			_, rec := f.do(t, f.reader, "GET", "/dig/api/record/"+at, "")
			entry, _ := rec["manualLinks"].(map[string]any)[fmt.Sprint(id)].(map[string]any)
			if entry == nil || entry["key"] != id {
				t.Fatalf("%s: manualLinks entry key must be the link id %v: %v", at, id, rec["manualLinks"])
			}
		}
		if code, m := f.do(t, f.writer, "DELETE", fmt.Sprintf("/dig/api/manual-link/%d", int64(id)), ""); code != 200 {
			t.Fatalf("delete by the key: %d %v", code, m)
		}
		_, rec := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/sites/%d", site), "")
		if len(rec["manualLinks"].(map[string]any)) != 0 {
			t.Fatalf("link left after delete: %v", rec["manualLinks"])
		}
	})
}
