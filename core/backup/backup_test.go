package backup_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/backup"
	"github.com/strata-archaeo/strata/core/demo"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/files/localstore"
	"github.com/strata-archaeo/strata/core/secrets"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// instance is one server's storage: a registry on an engine and a file
// store, sharing the instance key with the other instances of the test.
type instance struct {
	reg   *apps.Registry
	files files.Storage
}

func newInstance(t *testing.T, e store.Engine, kr *secrets.Keyring) instance {
	t.Helper()
	reg := apps.NewRegistry(testenv.NewBackend(t, e), apps.Options{PasswordCost: bcrypt.MinCost, Logger: testenv.Logger(), Secrets: kr})
	t.Cleanup(func() {
		names, _ := reg.List(context.Background())
		for _, n := range names {
			if a, err := reg.Get(context.Background(), n); err == nil {
				_ = a.DB.Close()
			}
		}
	})
	return instance{reg: reg, files: localstore.New(t.TempDir())}
}

// seeded makes an app with the demo dataset (tables, relations, records,
// versions), a second user, a secret setting and two files.
func seeded(t *testing.T, in instance, name string) *apps.App {
	t.Helper()
	ctx := context.Background()
	a := testenv.NewApp(t, in.reg, name)
	if err := demo.Seed(ctx, a, demo.Small, 3, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	testenv.NewUser(t, a, "Reader", "reader@example.org", auth.Reader)
	if err := a.SetSettings(ctx, map[string]string{"refmgr_api_key": "k-123", "welcome": "Benvenuti <b>àèì</b>"}); err != nil {
		t.Fatal(err)
	}
	for i, body := range []string{"first file body", strings.Repeat("second ", 5000)} {
		key, size, err := in.files.Put(ctx, name, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha(body)
		if _, err := a.DB.Exec(ctx, `INSERT INTO `+a.DB.Sys("files")+` (filename, ext, mime, size, sha256, description, keywords, printable, blob_key, created_at)
			VALUES (?, 'txt', 'text/plain', ?, ?, '', '', ?, ?, ?)`, "f"+string(rune('a'+i)), size, sum, true, key, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

func TestRoundTripAcrossEngines(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	kr := testenv.Keyring(t)
	for _, path := range [][2]store.Engine{{store.SQLite, store.Postgres}, {store.Postgres, store.SQLite}} {
		t.Run(string(path[0])+"_to_"+string(path[1]), func(t *testing.T) {
			ctx := context.Background()
			src, dst := newInstance(t, path[0], kr), newInstance(t, path[1], kr)
			a := seeded(t, src, "dig")
			var arch bytes.Buffer
			m, err := backup.Write(ctx, a, src.files, &arch, t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if m.Counts.Records == 0 || m.Counts.Users != 2 || m.Counts.Files != 2 || len(m.Blobs) != 2 {
				t.Fatalf("manifest counts %+v, blobs %d", m.Counts, len(m.Blobs))
			}
			res, err := backup.Restore(ctx, dst.reg, dst.files, "dig", bytes.NewReader(arch.Bytes()), backup.RestoreOptions{TmpDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Replaced || len(res.Warnings) != 0 {
				t.Fatalf("result %+v", res)
			}
			b, err := dst.reg.Get(ctx, "dig")
			if err != nil {
				t.Fatal(err)
			}
			compareApps(t, src, a, dst, b)
			// And back again, over the original (a replacement).
			var arch2 bytes.Buffer
			if _, err := backup.Write(ctx, b, dst.files, &arch2, t.TempDir(), nil); err != nil {
				t.Fatal(err)
			}
			res, err = backup.Restore(ctx, src.reg, src.files, "dig", bytes.NewReader(arch2.Bytes()), backup.RestoreOptions{TmpDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Replaced {
				t.Fatal("restoring over the live app is a replacement")
			}
			a2, err := src.reg.Get(ctx, "dig")
			if err != nil {
				t.Fatal(err)
			}
			compareApps(t, dst, b, src, a2)
			// The app works after the swap: a write and a read.
			if _, err := a2.DB.Exec(ctx, `INSERT INTO "`+schemaPrefix(a2)+`units" (code) VALUES (?)`, "US 9999"); err != nil {
				t.Fatalf("write after restore: %v", err)
			}
		})
	}
}

func schemaPrefix(a *apps.App) string {
	if a.DB.Schema() == "" {
		return ""
	}
	return a.DB.Schema() + `"."`
}

// compareApps dumps both apps into archives and compares every table's
// rows, but what a restore must change: file keys (new blobs), the
// versions it moves (rs_gen of sys_tables too), and the JWT secret's sealing (compared opened).
func compareApps(t *testing.T, ia instance, a *apps.App, ib instance, b *apps.App) {
	t.Helper()
	ta, fa := dump(t, ia, a)
	tb, fb := dump(t, ib, b)
	if len(ta) != len(tb) {
		t.Fatalf("tables: %d vs %d", len(ta), len(tb))
	}
	for name, rows := range ta {
		other, ok := tb[name]
		if !ok {
			t.Fatalf("table %s missing after restore", name)
		}
		if len(rows) != len(other) {
			t.Fatalf("%s: %d rows vs %d", name, len(rows), len(other))
		}
		for i := range rows {
			if rows[i] != other[i] {
				t.Fatalf("%s row %d differs:\n%s\n%s", name, i, rows[i], other[i])
			}
		}
	}
	if strings.Join(fa, ",") != strings.Join(fb, ",") {
		t.Fatalf("file bytes differ: %v vs %v", fa, fb)
	}
	sa, err := a.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sa {
		if k == "catalog_version" || k == "auth_version" {
			continue
		}
		if sb[k] != v {
			t.Fatalf("setting %s: %q vs %q", k, v, sb[k])
		}
	}
}

// dump returns each table's rows as canonical JSON lines and the files'
// contents' checksums.
func dump(t *testing.T, in instance, a *apps.App) (map[string][]string, []string) {
	t.Helper()
	var buf bytes.Buffer
	m, err := backup.Write(context.Background(), a, in.files, &buf, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	u, err := backup.Unpack(bytes.NewReader(buf.Bytes()), dir, func(string, io.Reader) error { return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	out := map[string][]string{}
	for _, tb := range m.Tables {
		f, err := os.Open(u.TablePath(tb.Name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var row map[string]any
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				t.Fatal(err)
			}
			switch tb.Name {
			case "sys_settings":
				continue // compared opened, in compareApps
			case "sys_files":
				delete(row, "blob_key")
				delete(row, "thumb_key")
			case "sys_tables":
				// A token of the table's relations, moved by every write
				// of sys_rs: the restore's own writes move it.
				delete(row, "rs_gen")
			}
			for k, v := range row {
				// Booleans are integers on SQLite; times compared at the
				// second (PostgreSQL keeps microseconds, SQLite what Go gave).
				switch x := v.(type) {
				case bool:
					if x {
						row[k] = float64(1)
					} else {
						row[k] = float64(0)
					}
				case string:
					if tm, err := time.Parse(time.RFC3339Nano, x); err == nil && len(x) >= 20 {
						row[k] = tm.UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano)
					}
				}
			}
			line, _ := json.Marshal(row)
			out[tb.Name] = append(out[tb.Name], string(line))
		}
		f.Close()
		sort.Strings(out[tb.Name])
	}
	var sums []string
	for _, b := range m.Blobs {
		sums = append(sums, b.SHA256)
	}
	sort.Strings(sums)
	return out, sums
}

func TestDamagedArchivesAreRefused(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		in := newInstance(t, e, testenv.Keyring(t))
		a := seeded(t, in, "dig")
		var arch bytes.Buffer
		if _, err := backup.Write(ctx, a, in.files, &arch, t.TempDir(), nil); err != nil {
			t.Fatal(err)
		}
		good := arch.Bytes()
		tampered := backuptamper(t, good)
		cases := []struct {
			name string
			data []byte
			code string
		}{
			{"truncated", good[:len(good)/2], "backup_invalid"},
			{"not gzip", []byte("hello"), "backup_invalid"},
			{"a row changed", tampered, "backup_checksum_mismatch"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				before := blobCount(t, in, "dig")
				_, err := backup.Restore(ctx, in.reg, in.files, "dig", bytes.NewReader(c.data), backup.RestoreOptions{TmpDir: t.TempDir()})
				var e *errs.Error
				if !errors.As(err, &e) || e.Code != c.code {
					t.Fatalf("err %v, want %s", err, c.code)
				}
				if n := blobCount(t, in, "dig"); n != before {
					t.Fatalf("blobs %d after a refused restore, %d before", n, before)
				}
				// The live app is untouched.
				var n int
				if err := a.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+a.DB.Sys("users")).Scan(&n); err != nil || n != 2 {
					t.Fatalf("users after refused restore: %d %v", n, err)
				}
			})
		}
	})
}

func blobCount(t *testing.T, in instance, app string) int {
	n := 0
	err := in.files.(files.Lister).List(context.Background(), app, func(files.BlobInfo) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// An archive made at an older migration step is loaded at that step and
// migrated after: the restored app is current.
func TestRestoreMigratesAnOlderArchive(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		in := newInstance(t, e, testenv.Keyring(t))
		all, err := store.LoadMigrations(e)
		if err != nil {
			t.Fatal(err)
		}
		older := len(all) - 1
		err = in.reg.Backend().Create(ctx, "old", func(ctx context.Context, db *store.DB) error {
			_, err := db.MigrateTo(ctx, time.Now, older)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		a, err := in.reg.Get(ctx, "old")
		if err != nil {
			t.Fatal(err)
		}
		var arch bytes.Buffer
		m, err := backup.Write(ctx, a, in.files, &arch, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.Migration != older {
			t.Fatalf("archive at step %d, want %d", m.Migration, older)
		}
		res, err := backup.Restore(ctx, in.reg, in.files, "renewed", &arch, backup.RestoreOptions{TmpDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Migrated) != 1 || res.Migrated[0] != len(all) {
			t.Fatalf("migrated %v, want [%d]", res.Migrated, len(all))
		}
		b, err := in.reg.Get(ctx, "renewed")
		if err != nil {
			t.Fatal(err)
		}
		pending, err := b.DB.PendingMigrations(ctx)
		if err != nil || len(pending) != 0 {
			t.Fatalf("pending after restore: %v %v", pending, err)
		}
	})
}

// An archive from a newer Strata (a migration step this one lacks) is
// refused before anything is built.
func TestRestoreRefusesANewerArchive(t *testing.T) {
	ctx := context.Background()
	in := newInstance(t, store.SQLite, testenv.Keyring(t))
	a := seeded(t, in, "dig")
	var arch bytes.Buffer
	if _, err := backup.Write(ctx, a, in.files, &arch, t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	future := rewriteManifest(t, arch.Bytes(), func(m map[string]any) { m["migration"] = 9999 })
	_, err := backup.Restore(ctx, in.reg, in.files, "later", bytes.NewReader(future), backup.RestoreOptions{TmpDir: t.TempDir()})
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != "backup_too_new" {
		t.Fatalf("err %v", err)
	}
	if ok, _ := in.reg.Backend().Exists(ctx, "later"); ok {
		t.Fatal("an app was made from a refused archive")
	}
}
