package realplugins_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/pluginsdk"
)

var (
	probeOnce sync.Once
	probeErr  error
)

// probeBinary builds testdata/hostprobe (once): a pluginsdk plugin whose
// routes call Host.Stratigraphy and Host.FeatureRows.
func probeBinary(t *testing.T) string {
	t.Helper()
	path := filepath.Join(binDir, "hostprobe")
	probeOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			probeErr = err
			return
		}
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		cmd := exec.Command(goBin, "build", "-o", path, "./core/pluginhost/realplugins/testdata/hostprobe")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			probeErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if probeErr != nil {
		t.Fatalf("build hostprobe: %v", probeErr)
	}
	return path
}

// probeFixture is the fixture with hostprobe beside the real plugins.
func probeFixture(t *testing.T, e store.Engine) *fixture {
	t.Helper()
	bin := probeBinary(t)
	f := newFixture(t, e, func(o *pluginhost.Options) { link(t, bin, filepath.Join(o.Dir, "hostprobe")) })
	deadline := time.Now().Add(20 * time.Second)
	for f.mgr.State("hostprobe") != pluginhost.StateRunning {
		if time.Now().After(deadline) {
			t.Fatalf("hostprobe: state %q; log:\n%s", f.mgr.State("hostprobe"), f.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return f
}

// The host calls a chronology plugin needs, through pluginsdk on the real
// server: Host.Stratigraphy answers a table's units with the chronology
// plugin's dating and the relations among them, as the actor sees them
// (a row subset sees only its units and the relations between them; a
// denied actor and a table without relations are refused with their
// codes); Host.FeatureRows answers the radiocarbon plugin's dates by
// record, for records the actor may read only, within its bound.
func TestRealPluginHostStratigraphyAndFeatureRows(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := probeFixture(t, e)
		ctx := context.Background()
		f.json("PUT", "/config/table/units", `{"rs":true,"id_field":"code"}`, f.super, 200)
		f.activate("units", "chronology", "chronology")
		f.activate("units", "radiocarbon", "radiocarbon")

		date := func(lab string, bp int) string {
			return fmt.Sprintf(`{"fields":{"lab_code":%q,"bp":%d,"bp_error":30,"material":"charcoal","curve":"intcal20"}}`, lab, bp)
		}
		u := map[string]int64{}
		for _, c := range []struct{ code, core, dates string }{
			{"US1", `"chrono_from":-100,"chrono_to":-50`, date("OxA-11", 2100) + "," + date("OxA-12", 2080)},
			{"US2", ``, date("OxA-21", 2200)},
			{"US3", `"chrono_from":-300,"chrono_to":-250`, ``},
			{"US4", ``, date("OxA-41", 2400)},
			{"US5", ``, ``},
		} {
			core := fmt.Sprintf(`"code":%q`, c.code)
			if c.core != "" {
				core += "," + c.core
			}
			body := `{"core":{` + core + `}`
			if c.dates != "" {
				body += `,"plugins":{"units_radiocarbon":[` + c.dates + `]}`
			}
			m := f.json("POST", "/record/units", body+"}", f.super, 200)
			id, ok := pluginsdk.Int(m["id"])
			if !ok {
				t.Fatalf("create %s: %v", c.code, m)
			}
			u[c.code] = id
		}
		// US1 covers US2, US2 cuts US3, US4 covers US3 (stored from US3:
		// is covered by), US5 is the same as US4.
		for _, r := range [][3]int64{{u["US1"], 5, u["US2"]}, {u["US2"], 6, u["US3"]}, {u["US4"], 5, u["US3"]}, {u["US5"], 9, u["US4"]}} {
			f.json("POST", "/record/units/rs", fmt.Sprintf(`{"first":%d,"relation":%d,"second":%d}`, r[0], r[1], r[2]), f.super, 200)
		}
		name := map[int64]string{}
		for k, v := range u {
			name[v] = k
		}

		// The writer's row subset on units: US1 to US3. The reader is
		// denied units.
		subset := `{"code":{"_in":["US1","US2","US3"]}}`
		writer, err := auth.FindUserByEmail(ctx, f.app.DB, "writer@example.org")
		if err != nil {
			t.Fatal(err)
		}
		reader, err := auth.FindUserByEmail(ctx, f.app.DB, "reader@example.org")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		if err := auth.SaveTablePrivilege(ctx, f.app.DB, &auth.TablePrivilege{UserID: writer.ID, TableName: "units", Privilege: auth.Writer, Subset: &subset}, now); err != nil {
			t.Fatal(err)
		}
		if err := auth.SaveTablePrivilege(ctx, f.app.DB, &auth.TablePrivilege{UserID: reader.ID, TableName: "units", Privilege: auth.Pending}, now); err != nil {
			t.Fatal(err)
		}

		t.Run("stratigraphy", func(t *testing.T) {
			for _, c := range []struct {
				label, body, token string
				units              string // codes, in id order
				relations          string // "first>second:order" in id order
				status             int
				code               string
			}{
				{"everything", `{"table":"units"}`, f.super, "US1 US2 US3 US4 US5",
					"US1>US2:above US2>US3:above US3>US4:below US4>US5:same", 200, ""},
				{"a row subset", `{"table":"units"}`, f.writer, "US1 US2 US3", "US1>US2:above US2>US3:above", 200, ""},
				{"a filter", `{"table":"units","filter":{"code":{"_in":["US3","US4"]}}}`, f.super, "US3 US4", "US3>US4:below", 200, ""},
				{"a filter within a row subset", `{"table":"units","filter":{"code":{"_in":["US3","US4"]}}}`, f.writer, "US3", "", 200, ""},
				{"as the plugin, for a subset actor", `{"table":"units","as_plugin":true}`, f.writer, "US1 US2 US3 US4 US5",
					"US1>US2:above US2>US3:above US3>US4:below US4>US5:same", 200, ""},
				{"a denied actor", `{"table":"units"}`, f.reader, "", "", 403, "not_enough_privilege"},
				{"a table without relations", `{"table":"finds"}`, f.super, "", "", 400, "rs_not_enabled"},
				{"no such table", `{"table":"nope"}`, f.super, "", "", 404, "table_not_found"},
				{"a bad filter", `{"table":"units","filter":{"nope":{"_eq":1}}}`, f.super, "", "", 400, ""},
			} {
				status, code, m := f.code("POST", "/hostprobe/matrix", c.body, c.token)
				if status != c.status || (c.code != "" && code != c.code) {
					t.Errorf("%s: %d %s %v, want %d %s", c.label, status, code, m, c.status, c.code)
					continue
				}
				if status != 200 {
					continue
				}
				var s pluginsdk.Stratigraphy
				raw, _ := json.Marshal(m)
				if err := json.Unmarshal(raw, &s); err != nil {
					t.Fatal(err)
				}
				var units, rels []string
				for _, x := range s.Units {
					units = append(units, name[x.ID])
					if x.Label != name[x.ID] {
						t.Errorf("%s: unit %d labelled %q", c.label, x.ID, x.Label)
					}
					switch {
					case x.ID == u["US1"] && (x.ChronoFrom == nil || *x.ChronoFrom != -100 || x.ChronoTo == nil || *x.ChronoTo != -50):
						t.Errorf("%s: US1 dated %v..%v", c.label, x.ChronoFrom, x.ChronoTo)
					case x.ID == u["US3"] && (x.ChronoFrom == nil || *x.ChronoFrom != -300 || x.ChronoTo == nil || *x.ChronoTo != -250):
						t.Errorf("%s: US3 dated %v..%v", c.label, x.ChronoFrom, x.ChronoTo)
					case x.ID == u["US2"] && (x.ChronoFrom != nil || x.ChronoTo != nil):
						t.Errorf("%s: undated US2 dated %v..%v", c.label, x.ChronoFrom, x.ChronoTo)
					}
				}
				for _, r := range s.Relations {
					rels = append(rels, fmt.Sprintf("%s>%s:%s", name[r.First], name[r.Second], r.Order))
					if r.Order != pluginsdk.RelationOrder(r.Relation) || r.ID == 0 {
						t.Errorf("%s: relation %+v", c.label, r)
					}
				}
				if strings.Join(units, " ") != c.units || strings.Join(rels, " ") != c.relations || !s.HasChronology {
					t.Errorf("%s: units %q relations %q (chronology %v), want %q %q", c.label, units, rels, s.HasChronology, c.units, c.relations)
				}
			}
		})

		t.Run("feature rows", func(t *testing.T) {
			ids := func(codes ...string) string {
				var out []string
				for _, c := range codes {
					out = append(out, fmt.Sprint(u[c]))
				}
				return "[" + strings.Join(out, ",") + "]"
			}
			many := make([]string, pluginsdk.MaxFeatureRecords+1)
			for i := range many {
				many[i] = fmt.Sprint(i + 1)
			}
			for _, c := range []struct {
				label, body, token string
				want               string // "code:lab,lab" by record, records ascending
				status             int
				code               string
			}{
				{"every dated record", `{"table":"units","feature":"radiocarbon","ids":` + ids("US1", "US2", "US3", "US4", "US5") + `}`, f.super,
					"US1:OxA-11,OxA-12 US2:OxA-21 US4:OxA-41", 200, ""},
				{"some records", `{"table":"units","feature":"radiocarbon","ids":` + ids("US4", "US2") + `}`, f.super, "US2:OxA-21 US4:OxA-41", 200, ""},
				{"a row subset", `{"table":"units","feature":"radiocarbon","ids":` + ids("US1", "US2", "US4") + `}`, f.writer, "US1:OxA-11,OxA-12 US2:OxA-21", 200, ""},
				{"as the plugin", `{"table":"units","feature":"radiocarbon","as_plugin":true,"ids":` + ids("US1", "US4") + `}`, f.writer, "US1:OxA-11,OxA-12 US4:OxA-41", 200, ""},
				{"no records", `{"table":"units","feature":"radiocarbon","ids":[]}`, f.super, "", 200, ""},
				{"a denied actor", `{"table":"units","feature":"radiocarbon","ids":` + ids("US1") + `}`, f.reader, "", 403, "not_enough_privilege"},
				{"too many records", `{"table":"units","feature":"radiocarbon","ids":[` + strings.Join(many, ",") + `]}`, f.super, "", 400, "too_many_records"},
				{"a bad id", `{"table":"units","feature":"radiocarbon","ids":[0]}`, f.super, "", 400, "invalid_parameter"},
				{"no feature", `{"table":"units","ids":[1]}`, f.super, "", 400, "parameter_missing"},
				{"an inactive feature", `{"table":"units","feature":"osteology","ids":[1]}`, f.super, "", 404, "feature_not_active"},
				{"a feature without rows", `{"table":"units","feature":"chronology","ids":[1]}`, f.super, "", 400, "feature_has_no_rows"},
				{"no such table", `{"table":"nope","feature":"radiocarbon","ids":[1]}`, f.super, "", 404, "table_not_found"},
			} {
				status, code, m := f.code("POST", "/hostprobe/rows", c.body, c.token)
				if status != c.status || (c.code != "" && code != c.code) {
					t.Errorf("%s: %d %s %v, want %d %s", c.label, status, code, m, c.status, c.code)
					continue
				}
				if status != 200 {
					continue
				}
				var res pluginsdk.FeatureRowsResult
				raw, _ := json.Marshal(m)
				if err := json.Unmarshal(raw, &res); err != nil {
					t.Fatal(err)
				}
				if res.ChildTable != "units_radiocarbon" {
					t.Errorf("%s: child table %q", c.label, res.ChildTable)
				}
				parents := make([]int64, 0, len(res.Rows))
				for id := range res.Rows {
					parents = append(parents, id)
				}
				slices.Sort(parents)
				var got []string
				for _, id := range parents {
					var labs []string
					for _, r := range res.Rows[id] {
						if link, _ := pluginsdk.Int(r["id_link"]); link != id || r["bp"] == nil || r["curve"] != "intcal20" {
							t.Errorf("%s: row %v under record %d", c.label, r, id)
						}
						labs = append(labs, fmt.Sprint(r["lab_code"]))
					}
					got = append(got, name[id]+":"+strings.Join(labs, ","))
				}
				if strings.Join(got, " ") != c.want {
					t.Errorf("%s: %q, want %q", c.label, strings.Join(got, " "), c.want)
				}
			}
		})

		// More rows than one page of records.List: all of them, in order.
		t.Run("many rows", func(t *testing.T) {
			const n = 230
			dates := make([]string, n)
			for i := range dates {
				dates[i] = date(fmt.Sprintf("L-%03d", i), 2000+i)
			}
			m := f.json("POST", "/record/units", `{"core":{"code":"US6"},"plugins":{"units_radiocarbon":[`+strings.Join(dates, ",")+`]}}`, f.super, 200)
			id, _ := pluginsdk.Int(m["id"])
			_, _, ans := f.code("POST", "/hostprobe/rows", fmt.Sprintf(`{"table":"units","feature":"radiocarbon","ids":[%d,%d]}`, id, u["US2"]), f.super)
			var res pluginsdk.FeatureRowsResult
			raw, _ := json.Marshal(ans)
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatal(err)
			}
			rows := res.Rows[id]
			if len(rows) != n || len(res.Rows[u["US2"]]) != 1 {
				t.Fatalf("%d rows of US6 (want %d), %d of US2: %v", len(rows), n, len(res.Rows[u["US2"]]), ans["code"])
			}
			for i, r := range rows {
				if r["lab_code"] != fmt.Sprintf("L-%03d", i) {
					t.Fatalf("row %d: %v", i, r["lab_code"])
				}
			}
		})
	})
}
