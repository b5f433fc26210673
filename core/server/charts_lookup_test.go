package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestChartsByLookupLabel: grouping by a lookup groups by the referenced
// record's label (its table's id_field), records with the same label
// together, within the caller's access to the referenced table (a unit
// outside the reader's subset there groups by its id, as a read shows no
// label for it).
func TestChartsByLookupLabel(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		if code, m := f.do(t, f.super, "PUT", api+"/config/table/units", `{"id_field":"code"}`); code != 200 {
			t.Fatalf("id_field: %d %v", code, m)
		}
		u1 := f.create(t, f.writer, "units", `{"code":"US 1"}`)
		u2 := f.create(t, f.writer, "units", `{"code":"US 2"}`)
		u2b := f.create(t, f.writer, "units", `{"code":"US 2"}`) // the same label
		u3 := f.create(t, f.writer, "units", `{"code":"US 3"}`)
		// finds: US 1 ×3 (weights 10, 20, 30), US 2 ×1 + US 2(b) ×2 (5, 5, 7), US 3 ×1 (1), none ×1
		for _, r := range []struct {
			unit   int64
			label  string
			weight int
		}{{u1, "a", 10}, {u1, "b", 20}, {u1, "a", 30}, {u2, "a", 5}, {u2b, "b", 5}, {u2b, "b", 7}, {u3, "a", 1}, {0, "a", 2}} {
			unit := "null"
			if r.unit != 0 {
				unit = fmt.Sprint(r.unit)
			}
			f.create(t, f.writer, "finds", fmt.Sprintf(`{"label":%q,"unit":%s,"weight":%d}`, r.label, unit, r.weight))
		}
		data := func(who, def string) string {
			code, m := f.do(t, who, "POST", api+"/chart/data", `{"definition":`+def+`}`)
			if code != 200 {
				t.Fatalf("%s: %d %v", def, code, m)
			}
			if m["series"] != nil {
				return fmt.Sprint(m["labels"], " ", m["series"])
			}
			return fmt.Sprint(m["labels"], " ", m["data"])
		}
		for _, tc := range []struct{ name, def, want string }{
			{"count", `{"tb":"finds","type":"bar","x_field":"unit","y_function":"COUNT"}`, "[ US 1 US 2 US 3] [1 3 3 1]"},
			{"sum", `{"tb":"finds","type":"bar","x_field":"unit","y_field":"weight","y_function":"SUM"}`, "[ US 1 US 2 US 3] [2 60 17 1]"},
			{"avg", `{"tb":"finds","type":"bar","x_field":"unit","y_field":"weight","y_function":"AVG"}`, "[ US 1 US 2 US 3] [2 20 5.666666666666667 1]"},
			{"count distinct", `{"tb":"finds","type":"bar","x_field":"unit","y_field":"weight","y_function":"COUNT_DISTINCT"}`, "[ US 1 US 2 US 3] [1 3 2 1]"},
			{"filtered", `{"tb":"finds","type":"bar","x_field":"unit","y_function":"COUNT","filter":{"weight":{"_gt":6}}}`, "[US 1 US 2] [3 1]"},
			{"second field a lookup", `{"tb":"finds","type":"bar","x_field":"label","x2_field":"unit","y_function":"COUNT"}`,
				"[a b] [map[data:[1 0] label:] map[data:[2 1] label:US 1] map[data:[1 2] label:US 2] map[data:[1 0] label:US 3]]"},
		} {
			if got := data(f.reader, tc.def); got != tc.want {
				t.Fatalf("%s: %s, want %s", tc.name, got, tc.want)
			}
		}

		// The reader sees only US 1 among the units: the others group by id.
		reader := f.userID(t, "reader@example.org")
		if code, m := f.do(t, f.super, "POST", fmt.Sprintf("%s/user/%d/privileges", api, reader), `{"table_name":"units","privilege":30,"subset":{"code":{"_eq":"US 1"}}}`); code != 200 {
			t.Fatalf("subset: %d %v", code, m)
		}
		want := fmt.Sprintf("[ %d %d %d US 1] [1 1 2 1 3]", u2, u2b, u3)
		if got := data(f.reader, `{"tb":"finds","type":"bar","x_field":"unit","y_function":"COUNT"}`); got != want {
			t.Fatalf("under a subset of units: %s, want %s", got, want)
		}
	})
}
