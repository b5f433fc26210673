package pluginhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// Host.AddGeodata writes a record's geodata as the actor the plugin
// passes, with the server's checks: an actor is required, the table must
// keep geodata, the actor must be able to edit the record there (a
// per-table read-only grant refuses), the geometry must be valid and the
// record must exist. What it writes is what GET /geoface shows.
func TestHostAddGeodata(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), nil)
		f.json("PUT", "/digs/api/config/table/plain", `{"geodata":true}`, f.super, 200)
		id := fmt.Sprint(f.json("POST", "/digs/api/record/plain", `{"core":{"code":"P1"}}`, f.writer, 200)["id"])
		f.json("POST", "/digs/api/record/other", `{"core":{"code":"O1"}}`, f.writer, 200)
		call := func(token, body string) map[string]any {
			t.Helper()
			rec := f.do("POST", "/digs/api/testplug/sys", body, token)
			m := map[string]any{}
			_ = json.Unmarshal(rec.Body.Bytes(), &m)
			m["http"] = rec.Code
			return m
		}
		point := `{"type":"Point","coordinates":[12.48,41.89]}`
		ok := call(f.writer, `{"op":"geodata","table":"plain","record":`+id+`,"geometry":`+point+`,"as_actor":true}`)
		if ok["http"] != 200 || ok["id"] == nil {
			t.Fatalf("add: %v", ok)
		}
		for _, tc := range []struct {
			label, body, grpc, code string
		}{
			{"no actor", `{"op":"geodata","table":"plain","record":` + id + `,"geometry":` + point + `}`, "InvalidArgument", "actor_required"},
			{"table without geodata", `{"op":"geodata","table":"other","record":1,"geometry":` + point + `,"as_actor":true}`, "InvalidArgument", "geodata_not_enabled"},
			{"bad geometry", `{"op":"geodata","table":"plain","record":` + id + `,"geometry":{"type":"Point","coordinates":[500,0]},"as_actor":true}`, "InvalidArgument", ""},
			{"no such record", `{"op":"geodata","table":"plain","record":999,"geometry":` + point + `,"as_actor":true}`, "NotFound", "record_not_found"},
			{"no such table", `{"op":"geodata","table":"nope","record":1,"geometry":` + point + `,"as_actor":true}`, "NotFound", ""},
		} {
			m := call(f.writer, tc.body)
			if m["http"] != 400 || m["grpc"] != tc.grpc || !strings.Contains(fmt.Sprint(m["message"]), tc.code) {
				t.Errorf("%s: %v", tc.label, m)
			}
		}
		// Read-only on this table for the writer: refused, as on the server.
		writerID := userID(t, f, "writer@example.org")
		if err := auth.SaveTablePrivilege(context.Background(), f.app.DB, &auth.TablePrivilege{UserID: writerID, TableName: "plain", Privilege: auth.Reader}, time.Now()); err != nil {
			t.Fatal(err)
		}
		if m := call(f.writer, `{"op":"geodata","table":"plain","record":`+id+`,"geometry":`+point+`,"as_actor":true}`); m["http"] != 400 || m["grpc"] != "PermissionDenied" {
			t.Errorf("read-only grant: %v", m)
		}
		feats := f.json("GET", "/digs/api/geoface?tb=plain", "", f.super, 200)["geojson"].(map[string]any)["features"].([]any)
		if len(feats) != 1 || fmt.Sprint(feats[0].(map[string]any)["geometry"]) != "map[coordinates:[12.48 41.89] type:Point]" {
			t.Fatalf("geodata: %v", feats)
		}
	})
}

func userID(t *testing.T, f *fixture, email string) int64 {
	t.Helper()
	var id int64
	if err := f.app.DB.QueryRow(context.Background(), `SELECT id FROM `+f.app.DB.Sys("users")+` WHERE email = ?`, email).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
