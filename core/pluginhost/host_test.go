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

// sys makes one Host call through the test plugin's POST route.
func (f *fixture) sys(route, body string) map[string]any {
	f.t.Helper()
	rec := f.do("POST", "/digs/api/"+route+"/sys", body, f.writer)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		f.t.Fatalf("%s %s: %d %s", route, body, rec.Code, rec.Body)
	}
	return m
}

func rowsOf(m map[string]any) []map[string]any {
	var out []map[string]any
	rows, _ := m["rows"].([]any)
	for _, r := range rows {
		out = append(out, r.(map[string]any))
	}
	return out
}

// System tables: created per application (at start-up for existing ones,
// on first use for new ones), each plugin reaching only its own.
func TestHostSystemTables(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug", "testplug2"), nil)
		// Created at start-up in the application that existed then.
		for _, tb := range []string{"sys_testplug_notes", "sys_testplug2_notes"} {
			if n := f.count(tb); n != 0 {
				t.Fatalf("%s: %d rows", tb, n)
			}
		}
		w := f.sys("testplug", `{"op":"write","table":"notes","rows":[{"body":"one","n":1,"done":true},{"body":"two","n":"2"},{"body":"three","n":3}]}`)
		if fmt.Sprint(w["ids"]) != "[1 2 3]" {
			t.Fatalf("write: %v", w)
		}
		r := rowsOf(f.sys("testplug", `{"op":"read","table":"notes","filter":{"n":{"_gte":2}}}`))
		if len(r) != 2 || r[0]["body"] != "two" || r[0]["n"] != float64(2) || r[0]["done"] != nil || r[1]["id"] != float64(3) {
			t.Errorf("read: %v", r)
		}
		// Update by id, delete, in one call.
		if w := f.sys("testplug", `{"op":"write","table":"notes","rows":[{"id":1,"body":"uno"}],"delete":[3]}`); fmt.Sprint(w["ids"]) != "[1]" {
			t.Errorf("update: %v", w)
		}
		r = rowsOf(f.sys("testplug", `{"op":"read","table":"notes"}`))
		if len(r) != 2 || r[0]["body"] != "uno" || r[0]["n"] != float64(1) || r[0]["done"] != true {
			t.Errorf("after update: %v", r)
		}
		// The other plugin's table of the same short name is its own.
		f.sys("testplug2", `{"op":"write","table":"notes","rows":[{"body":"theirs"}]}`)
		if r := rowsOf(f.sys("testplug2", `{"op":"read","table":"notes"}`)); len(r) != 1 || r[0]["body"] != "theirs" {
			t.Errorf("testplug2 reads %v", r)
		}
		if n := f.count("sys_testplug_notes"); n != 2 {
			t.Errorf("testplug's table: %d rows", n)
		}
		// Nothing outside the manifest: no other name, no other column, no
		// way round the prefix, no bad filter; nothing written on error.
		for _, c := range []struct{ body, grpc, msg string }{
			{`{"op":"read","table":"users"}`, "NotFound", "system_table_not_found"},
			{`{"op":"read","table":"../notes"}`, "NotFound", "system_table_not_found"},
			{`{"op":"write","table":"testplug2_notes","rows":[{"body":"x"}]}`, "NotFound", "system_table_not_found"},
			{`{"op":"write","table":"notes","rows":[{"body":"ok"},{"password":"x"}]}`, "InvalidArgument", "invalid_value"},
			{`{"op":"write","table":"notes","rows":[{"id":99,"body":"x"}]}`, "NotFound", "system_row_not_found"},
			{`{"op":"write","table":"notes","rows":[{"n":"many"}]}`, "InvalidArgument", "invalid_value"},
			{`{"op":"read","table":"notes","filter":{"creator":{"_eq":1}}}`, "InvalidArgument", "invalid_field"},
			{`{"op":"read","table":"notes","filter":{"body":{"_zz":1}}}`, "InvalidArgument", "invalid_filter"},
			{`{"op":"read","app":"nowhere","table":"notes"}`, "NotFound", "app_not_found"},
		} {
			got := f.sys("testplug", c.body)
			if got["grpc"] != c.grpc || !strings.HasPrefix(fmt.Sprint(got["message"]), c.msg) {
				t.Errorf("%s: %v", c.body, got)
			}
		}
		if n := f.count("sys_testplug_notes"); n != 2 {
			t.Errorf("a failed write left rows: %d", n)
		}

		// An application created later gets the tables on first use, and
		// its rows are its own.
		later := testenv.NewApp(t, f.reg, "later")
		if r := rowsOf(f.sys("testplug", `{"op":"read","app":"later","table":"notes"}`)); len(r) != 0 {
			t.Errorf("new app: %v", r)
		}
		f.sys("testplug", `{"op":"write","app":"later","table":"notes","rows":[{"body":"elsewhere"}]}`)
		var n int
		if err := later.DB.QueryRow(context.Background(), `SELECT COUNT(*) FROM `+later.DB.Qualify("sys_testplug_notes")).Scan(&n); err != nil || n != 1 {
			t.Errorf("later app: %d %v", n, err)
		}
		if n := f.count("sys_testplug_notes"); n != 2 {
			t.Errorf("digs after writing to later: %d", n)
		}
	})
}

// App settings without secrets; Log into the server's log.
func TestHostSettingsAndLog(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), nil)
		if err := f.app.SetSettings(context.Background(), map[string]string{"language": "it",
			"oauth.idp_a.client_id": "public-id", "oauth.idp_a.client_secret": "s3cret"}); err != nil {
			t.Fatal(err)
		}
		got := f.sys("testplug", `{"op":"settings"}`)
		settings, _ := got["settings"].(map[string]any)
		if settings["language"] != "it" || settings["oauth.idp_a.client_id"] != "public-id" || settings["name"] != "digs" {
			t.Errorf("settings: %v", got)
		}
		raw, _ := json.Marshal(got)
		if strings.Contains(string(raw), "s3cret") || strings.Contains(string(raw), "jwt_secret") || strings.Contains(string(raw), "client_secret") {
			t.Errorf("a secret reached the plugin: %s", raw)
		}
		f.sys("testplug", `{"op":"log"}`)
		if log := f.logs.String(); !strings.Contains(log, "hello from testplug") || !strings.Contains(log, "plugin=testplug") ||
			!strings.Contains(log, "plugin.k=v") {
			t.Errorf("plugin log line missing:\n%s", log)
		}
	})
}

// QueryRecords: as the actor (its level and row subset, read from the
// database) or as the plugin (everything); pages beyond the list's page
// size; offsets off a page boundary.
func TestHostQueryRecords(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), nil)
		ctx := context.Background()
		var rows []string
		for i := range 450 {
			code := "B"
			if i%3 == 0 {
				code = "A"
			}
			rows = append(rows, fmt.Sprintf("(%q, %d)", code, i))
		}
		stmt := `INSERT INTO ` + f.app.DB.Qualify("plain") + ` (code, year) VALUES ` + strings.ReplaceAll(strings.Join(rows, ","), `"`, `'`)
		if _, err := f.app.DB.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
		q := func(body string) map[string]any { return f.sys("testplug", body) }
		all := q(`{"op":"query","table":"plain","limit":10000}`)
		if all["total"] != float64(450) || len(rowsOf(all)) != 450 {
			t.Fatalf("as the plugin: total %v, %d rows", all["total"], len(rowsOf(all)))
		}
		window := q(`{"op":"query","table":"plain","offset":99,"limit":3,"filter":{"code":{"_eq":"A"}}}`)
		if page := rowsOf(window); window["total"] != float64(150) || len(page) != 3 || page[0]["year"] != float64(99*3) || page[2]["year"] != float64(101*3) {
			t.Errorf("unaligned window: %v", window)
		}
		if n := len(rowsOf(q(`{"op":"query","table":"plain","offset":400,"limit":100}`))); n != 50 {
			t.Errorf("last page: %d rows", n)
		}
		// A writer with a subset on plain sees only its rows.
		subset := `{"code":{"_eq":"A"}}`
		writer, err := auth.FindUserByEmail(ctx, f.app.DB, "writer@example.org")
		if err != nil {
			t.Fatal(err)
		}
		if err := auth.SaveTablePrivilege(ctx, f.app.DB, &auth.TablePrivilege{UserID: writer.ID, TableName: "plain",
			Privilege: auth.Writer, Subset: &subset}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		mine := q(`{"op":"query","table":"plain","as_actor":true,"limit":10000}`)
		if mine["total"] != float64(150) {
			t.Errorf("as the writer with a subset: %v", mine["total"])
		}
		for _, r := range rowsOf(mine) {
			if r["code"] != "A" {
				t.Fatalf("row outside the subset: %v", r)
			}
		}
		// Another table where the writer's level is pending: refused.
		if err := auth.SaveTablePrivilege(ctx, f.app.DB, &auth.TablePrivilege{UserID: writer.ID, TableName: "other",
			Privilege: auth.Pending}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if got := q(`{"op":"query","table":"other","as_actor":true}`); got["grpc"] != "PermissionDenied" {
			t.Errorf("no read right: %v", got)
		}
		if got := q(`{"op":"query","table":"nowhere"}`); got["grpc"] != "NotFound" {
			t.Errorf("unknown table: %v", got)
		}
	})
}

// altered is sealed text with one character of its ciphertext changed:
// one whose 6 bits all count (not the last, whose low bits may be padding
// an encoder ignores), to another (the old test wrote "AA" over the last
// two, unchanged when they were "AA" already).
func altered(sealed string) string {
	i := len(sealed) - 10
	c := byte('A')
	if sealed[i] == 'A' {
		c = 'B'
	}
	return sealed[:i] + string(c) + sealed[i+1:]
}

// Seal and Open: a plugin's secret is sealed with the instance key (the
// registry's keyring), bound to the plugin, app and purpose; it opens
// back only for the same three, and clear or altered text is refused.
func TestHostSealOpen(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug", "testplug2"), nil)
		testenv.NewApp(t, f.reg, "other")
		s := f.sys("testplug", `{"op":"seal","purpose":"api_key","value":"hunter2"}`)
		sealed, _ := s["sealed"].(string)
		if !strings.HasPrefix(sealed, "enc:v1:") || strings.Contains(sealed, "hunter2") {
			t.Fatalf("seal: %v", s)
		}
		// Sealed with the instance key: the keyring opens it for this place.
		if v, err := f.reg.Keyring().Open(sealed, "plugin\x00testplug\x00digs\x00api_key"); err != nil || v != "hunter2" {
			t.Fatalf("keyring open: %q %v", v, err)
		}
		body := func(app, purpose, v string) string {
			b, _ := json.Marshal(map[string]string{"op": "open", "app": app, "purpose": purpose, "value": v})
			return string(b)
		}
		if o := f.sys("testplug", body("digs", "api_key", sealed)); o["clear"] != "hunter2" {
			t.Fatalf("open: %v", o)
		}
		for name, c := range map[string]struct{ plugin, app, purpose, value string }{
			"another purpose": {"testplug", "digs", "password", sealed},
			"another app":     {"testplug", "other", "api_key", sealed},
			"another plugin":  {"testplug2", "digs", "api_key", sealed},
			"clear text":      {"testplug", "digs", "api_key", "hunter2"},
			"altered":         {"testplug", "digs", "api_key", altered(sealed)},
		} {
			if o := f.sys(c.plugin, body(c.app, c.purpose, c.value)); o["status"] != "error" || o["grpc"] != "InvalidArgument" ||
				!strings.Contains(fmt.Sprint(o["message"]), "secret_invalid") {
				t.Errorf("%s: %v", name, o)
			}
		}
		if o := f.sys("testplug", `{"op":"seal","purpose":"","value":"x"}`); o["grpc"] != "InvalidArgument" {
			t.Errorf("no purpose: %v", o)
		}
		if o := f.sys("testplug", `{"op":"seal","app":"nowhere","purpose":"k","value":"x"}`); o["grpc"] != "NotFound" {
			t.Errorf("unknown app: %v", o)
		}
	})
}
