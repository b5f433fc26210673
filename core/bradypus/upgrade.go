package bradypus

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

var (
	ErrNoUpgrade      = errs.New(errs.Conflict, "no_major_upgrade_needed", "the application is a Strata application: no major upgrade is needed")
	ErrSnapshotFailed = errs.New(errs.Unavailable, "snapshot_failed", "the snapshot of the BraDypUS folder could not be written; nothing was started")
	ErrUpgradeFailed  = errs.New(errs.Invalid, "upgrade_failed", "the upgrade failed; the BraDypUS folder is untouched and nothing was created")
	ErrAuthFailed     = errs.New(errs.Unauthenticated, "superadmin_auth_failed", "email and password of a super-admin of the BraDypUS application are needed")
	// ErrNotSupported: the folder holds something this upgrade cannot
	// convert with confidence; nothing is started (not_supported lists it).
	ErrNotSupported = errs.New(errs.Conflict, "major_upgrade_not_supported",
		"the BraDypUS application holds data this upgrade cannot convert yet; nothing was started")
)

// Deps are what an upgrade works with.
type Deps struct {
	Apps    *apps.Registry
	DataDir string
	Now     func() time.Time
	// Files is the instance's file store, where the files' bytes go.
	Files *files.Service
	// Plugins activate the plugin features and check their data (nil: no
	// plugins; an application with plugin data is then refused).
	Plugins Plugins
	// Limits are the sign-in limits and lock the route's password check
	// goes through (core/ratelimit's Set; nil: none, for callers that
	// check no password over the network).
	Limits Limits
}

// Limits counts the attempts at the super-admin check of the major
// upgrade route as sign-ins (ratelimit.Set's FolderSignIn): a password
// guessed there is guessed under the same limits as at sign-in.
type Limits interface {
	FolderSignIn(r *http.Request, app, email string) error
	FolderFailed(r *http.Request, app, email string)
}

// Count is one line of the verification report: rows before and after.
type Count struct {
	Table  string `json:"table"`
	Before int64  `json:"before"`
	After  int64  `json:"after"`
	Equal  bool   `json:"equal"`
}

// Report is what an upgrade did. The verification (Counts) is advisory:
// it never turns a success into a failure.
type Report struct {
	App      string   `json:"app"`
	From     string   `json:"from_version"`
	Dir      string   `json:"dir"` // the upgrade's record: snapshot, report.json, upgrade.log
	Snapshot string   `json:"snapshot"`
	Counts   []Count  `json:"counts"`
	Verified bool     `json:"verified"`
	Warnings []string `json:"warnings"`
	// Refused are the entries of the folder not read because they would
	// lead outside it or are not plain files (confine.go): each is also a
	// warning, and left out of the snapshot.
	Refused []Refused `json:"refused"`
	log     []string
	dropped int // warnings not listed (maxWarnings)
}

// refused records an entry of the folder that was not read (once per
// path: the snapshot and the files may both meet it).
func (r *Report) refused(e Refused) {
	for _, x := range r.Refused {
		if x.Path == e.Path {
			return
		}
	}
	r.Refused = append(r.Refused, e)
	r.logf("refused %q: %s", e.Path, e.Reason)
}

// maxWarnings caps the warnings listed; the rest are counted.
const maxWarnings = 100

// warnf records something the upgrade did not bring over as it was.
func (r *Report) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.logf("warning: %s", msg)
	if len(r.Warnings) < maxWarnings {
		r.Warnings = append(r.Warnings, msg)
		return
	}
	r.dropped++
}

func (r *Report) logf(format string, args ...any) {
	r.log = append(r.log, time.Now().UTC().Format(time.RFC3339)+" "+fmt.Sprintf(format, args...))
}

// Upgrade converts the BraDypUS folder f into the Strata application of
// the same name, after checking that email and password are a
// super-admin's of f (bcrypt hashes and BraDypUS's older SHA-1 ones). A
// BraDypUS 4 folder is read by readLegacy4 into the model readLegacy
// builds for 5, then converted the same way.
//
// In order: the credentials; for BraDypUS 4, what it holds that cannot
// be mapped (major_upgrade_not_supported); the plugins its plugin data and its Zotero
// libraries and links need (plugin_not_installed when one is not
// running); a snapshot of the folder (snapshot_failed: nothing
// started); the files' bytes into the file store; then the application is
// created and, in one transaction, its users (ids and password hashes
// kept), table privileges, vocabularies, tables and fields (through the
// catalog operations), plugin features (activated as the host activates
// them; their rows pass through the plugins' save hooks), table settings,
// records (ids kept), relations, stratigraphic relations, manual links,
// versions, files and their links, geodata, saved queries, charts, print
// templates (bdus_cfg_templates; the older template files on disk are
// accounted for, not converted: see templateFiles), assemblage
// analyses and the Zotero libraries and links (into the refmgr plugin's
// system tables, keys sealed for it: see copyZotero). Any failure drops what was created, stored files
// included (upgrade_failed). On success the folder is set aside (renamed
// hidden, or its link removed) and a report with row counts before and
// after is written beside the snapshot.
func Upgrade(ctx context.Context, d Deps, f *Folder, email, password string) (*Report, error) {
	now := d.Now().UTC()
	rep := &Report{App: f.Name, From: f.Version, Counts: []Count{}, Warnings: []string{}, Refused: []Refused{}}
	if f.Engine != "" && f.Engine != "sqlite" {
		return nil, ErrUpgradeFailed.With("detail", "only SQLite BraDypUS applications can be upgraded (major_upgrade_sqlite_only)")
	}
	if exists, err := d.Apps.Backend().Exists(ctx, f.Name); err != nil {
		return nil, err
	} else if exists {
		return nil, ErrNoUpgrade
	}
	// Every read of the folder goes through root, confined to it.
	root, err := openFolder(f.Dir)
	if err != nil {
		return nil, ErrUpgradeFailed.With("detail", "cannot open the folder: "+err.Error()).Wrap(err)
	}
	defer root.Close()
	// A BraDypUS 4 folder is read first: its file is opened with the views
	// that show it as a BraDypUS 5 one (legacy4.go).
	var l4 *layout4
	var src *sql.DB
	if f.Major() < 5 {
		if l4, err = readLegacy4(ctx, root); err != nil {
			return nil, ErrUpgradeFailed.With("detail", "BraDypUS 4 folder: "+err.Error()).Wrap(err)
		}
		src, err = openLegacy4(root, l4)
	} else {
		src, err = openLegacy(root)
	}
	if err != nil {
		return nil, ErrUpgradeFailed.With("detail", "cannot open db/bdus.sqlite: "+err.Error()).Wrap(err)
	}
	defer src.Close()
	if err := checkSuperAdmin(ctx, src, email, password); err != nil {
		return nil, err
	}
	var la *legacyApp
	if l4 != nil {
		if len(l4.refused) > 0 {
			return nil, ErrNotSupported.With("detail", "the BraDypUS 4 application holds what this upgrade cannot convert with confidence: "+
				strings.Join(l4.refused, "; ")).With("not_supported", l4.refused)
		}
		la = l4.la
		rep.From = "4"
		for _, n := range l4.notes {
			rep.warnf("%s", n)
		}
		for _, e := range l4.skipped {
			rep.refused(e)
		}
	} else if la, err = readLegacy(ctx, src); err != nil {
		return nil, ErrUpgradeFailed.With("detail", err.Error()).Wrap(err)
	}
	if err := checkNames(la); err != nil {
		return nil, err
	}
	specs, err := featureSpecs(d.Plugins, la)
	if err != nil {
		return nil, err
	}
	rep.Dir = filepath.Join(d.DataDir, "upgrades", f.Name+"-"+now.Format("20060102-150405")+"-"+randomHex(3))
	if rep.Snapshot, err = snapshot(f, root, rep.Dir, rep); err != nil {
		return nil, ErrSnapshotFailed.With("detail", err.Error()).Wrap(err)
	}
	rep.logf("snapshot %s written", rep.Snapshot)
	if err := create(ctx, d, f, root, la, specs, rep, now); err != nil {
		rep.logf("failed: %v; the application was dropped", err)
		_ = writeRecord(rep, false)
		detail := err.Error()
		if e, ok := errs.As(err); ok && e.Kind != errs.Internal && !strings.Contains(detail, e.Code) {
			detail = e.Code + ": " + detail
		}
		return nil, ErrUpgradeFailed.With("detail", detail).Wrap(err)
	}
	if rep.dropped > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("and %d more warnings (upgrade.log lists them all)", rep.dropped))
	}
	if err := setAside(f, now); err != nil {
		rep.Warnings = append(rep.Warnings, "the BraDypUS folder could not be set aside: "+err.Error())
	}
	rep.logf("upgrade complete; verified: %v", rep.Verified)
	if err := writeRecord(rep, true); err != nil {
		rep.Warnings = append(rep.Warnings, "the report could not be written: "+err.Error())
	}
	return rep, nil
}

// checkNames refuses, before anything is started (no snapshot, no app), a
// BraDypUS table or field whose name Strata's schema API would refuse
// (schema.CheckTableName, CheckFieldName): BraDypUS allowed pg_ names, for
// instance, which Strata reserves on both engines. The answer is the
// schema API's own code, naming the table and field, so the name can be
// changed in BraDypUS and the upgrade run again.
func checkNames(la *legacyApp) error {
	for _, t := range la.Tables {
		if err := schema.CheckTableName(t.Name); err != nil {
			if e, ok := errs.As(err); ok {
				return e.With("table", t.Name)
			}
			return err
		}
		for _, f := range t.Fields {
			if err := schema.CheckFieldName(f.Name); err != nil {
				if e, ok := errs.As(err); ok {
					return e.With("table", t.Name).With("field", f.Name)
				}
				return err
			}
		}
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func checkSuperAdmin(ctx context.Context, src *sql.DB, email, password string) error {
	email = auth.NormalizeEmail(email)
	if email == "" || password == "" {
		return errs.New(errs.Invalid, "email_password_needed", "email and password are required")
	}
	rows, err := src.QueryContext(ctx, `SELECT COALESCE(password, '') FROM bdus_users WHERE LOWER(TRIM(email)) = ? AND privilege = 1`, email)
	if err != nil {
		return ErrUpgradeFailed.With("detail", "cannot read bdus_users: "+err.Error()).Wrap(err)
	}
	defer rows.Close()
	for rows.Next() {
		var hash string
		if err := rows.Scan(&hash); err != nil {
			return err
		}
		if hash != "" && auth.VerifyPassword(hash, password) {
			return nil
		}
	}
	return ErrAuthFailed
}

// snapshot writes the folder (config, database, everything in it) as
// snapshot.tar.gz in dir: its folders and regular files, read through
// root; a link or any other kind of entry is not followed and is listed
// in the report's refused entries.
func snapshot(f *Folder, root *folderRoot, dir string, rep *Report) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "snapshot.tar.gz")
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	gz := gzip.NewWriter(out)
	tw := tar.NewWriter(gz)
	// fs.WalkDir lists each folder without following links: a link is a
	// DirEntry of type ModeSymlink, never entered.
	err = fs.WalkDir(root.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			rep.refused(Refused{Path: p, Reason: ReasonSymlink})
			return nil
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			rep.refused(Refused{Path: p, Reason: ReasonNotRegular})
			return nil
		}
		var info fs.FileInfo
		var in *os.File
		if d.IsDir() {
			if info, err = root.lstat(p); err != nil {
				return err
			}
		} else {
			in, info, err = root.open(p)
			if e, ok := asRefused(err); ok {
				rep.refused(e)
				return nil
			}
			if err != nil {
				return err
			}
			defer in.Close()
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = f.Name + "/" + p
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if in == nil {
			return nil
		}
		_, err = io.Copy(tw, in)
		return err
	})
	for _, c := range []io.Closer{tw, gz} {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	if serr := out.Sync(); err == nil {
		err = serr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

func writeRecord(rep *Report, ok bool) error {
	if rep.Dir == "" {
		return nil
	}
	b, _ := json.MarshalIndent(map[string]any{"ok": ok, "report": rep}, "", "  ")
	if err := os.WriteFile(filepath.Join(rep.Dir, "report.json"), b, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(rep.Dir, "upgrade.log"), []byte(strings.Join(rep.log, "\n")+"\n"), 0o600)
}

// setAside stops the folder from being found again: a link made by adopt
// is removed (its target stays), a folder is renamed hidden.
func setAside(f *Folder, now time.Time) error {
	st, err := os.Lstat(f.Dir)
	if err != nil {
		return err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return os.Remove(f.Dir)
	}
	return os.Rename(f.Dir, filepath.Join(filepath.Dir(f.Dir), "."+f.Name+".upgraded-"+now.Format("20060102-150405")))
}

// create makes the application and converts into it; any failure drops it.
func create(ctx context.Context, d Deps, f *Folder, root *folderRoot, la *legacyApp, specs map[string]schema.FeatureSpec, rep *Report, now time.Time) (err error) {
	def := f.Definition
	if len([]rune(def)) > 500 {
		def = string([]rune(def)[:500])
	}
	// The first user is replaced by the file's users (ids and hashes
	// kept); its password is random and never used.
	a, err := d.Apps.Create(ctx, apps.CreateParams{Name: f.Name, Definition: def, Email: "upgrade@strata.invalid",
		Password: randomHex(16) + "Aa1!", AdminName: "upgrade"})
	if err != nil {
		return err
	}
	rep.logf("application %s created", f.Name)
	defer func() {
		if err != nil {
			if derr := d.Apps.Drop(context.WithoutCancel(ctx), f.Name); derr != nil {
				err = errors.Join(err, fmt.Errorf("drop %s: %w", f.Name, derr))
			}
		}
	}()
	// The files' bytes go to the store first (outside the transaction);
	// whatever fails after removes them again.
	staged, err := stageFiles(ctx, d.Files, f.Name, root, la, rep)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	defer func() {
		if err != nil {
			discardFiles(d.Files, f.Name, staged)
		}
	}()
	cv := &conversion{la: la, rep: rep, now: now, app: f.Name, specs: specs, plugins: d.Plugins, staged: staged, root: root}
	if err := a.DB.Tx(ctx, func(tx *store.DB) error { return cv.run(ctx, tx) }); err != nil {
		return err
	}
	return verify(ctx, a.DB, la, specs, rep)
}

// conversion is one upgrade's work inside its transaction.
type conversion struct {
	la      *legacyApp
	rep     *Report
	now     time.Time
	app     string
	specs   map[string]schema.FeatureSpec
	plugins Plugins
	staged  []stagedFile
	root    *folderRoot // the BraDypUS folder
}

// fieldDef reads a BraDypUS field definition as a Strata one.
func fieldDef(t *legacyTable, lf legacyField) (schema.FieldDef, error) {
	var fd schema.FieldDef
	b, _ := json.Marshal(lf.Def)
	if err := wire.Decode(b, &fd, wire.Options{}); err != nil {
		return fd, fmt.Errorf("field %s.%s: %w", t.Name, lf.Name, err)
	}
	return fd, nil
}

func (cv *conversion) run(ctx context.Context, tx *store.DB) error {
	la, rep, now := cv.la, cv.rep, cv.now
	users, err := copyUsers(ctx, tx, la, now)
	if err != nil {
		return fmt.Errorf("users: %w", err)
	}
	rep.logf("%d users", len(users))
	if err := copyRows(ctx, tx, la, "bdus_vocabularies", "vocabularies", []string{"voc", "def", "sort"}, []string{"voc", "value", "sort"}, func(r []any) []any {
		if r[2] == nil {
			r[2] = 0
		}
		return r
	}); err != nil {
		return fmt.Errorf("vocabularies: %w", err)
	}
	for _, t := range la.Tables {
		if t.Child != "" {
			continue // the feature makes it (activateFeatures)
		}
		if _, err := schema.CreateTable(ctx, tx, schema.TableDef{Name: t.Name, Label: t.Label, IsPlugin: t.IsPlugin, PluginOf: t.PluginOf}, now); err != nil {
			return fmt.Errorf("table %s: %w", t.Name, err)
		}
	}
	// Fields in their order; value lists (get_values_from_tb) once every
	// field exists, since they may name a field added later. The columns
	// of plugin features are the features' to add.
	later := map[[2]string]string{}
	for _, t := range la.Tables {
		if t.Child != "" {
			continue
		}
		own := featureColumns(t, cv.specs)
		for _, lf := range t.Fields {
			if own[lf.Name] {
				continue
			}
			fd, err := fieldDef(t, lf)
			if err != nil {
				return err
			}
			if fd.GetValuesFromTb != "" {
				later[[2]string{t.Name, fd.Name}], fd.GetValuesFromTb = fd.GetValuesFromTb, ""
			}
			if _, err := schema.AddField(ctx, tx, t.Name, fd, now); err != nil {
				return fmt.Errorf("field %s.%s: %w", t.Name, lf.Name, err)
			}
		}
	}
	if err := activateFeatures(ctx, tx, la, cv.specs, rep, now); err != nil {
		return err
	}
	for k, v := range later {
		if _, err := schema.PutField(ctx, tx, k[0], k[1], schema.FieldUpdate{GetValuesFromTb: schema.Set(v)}, now); err != nil {
			return fmt.Errorf("field %s.%s: %w", k[0], k[1], err)
		}
	}
	cat, err := schema.Load(ctx, tx)
	if err != nil {
		return err
	}
	for _, t := range la.Tables {
		if t.Child == "" {
			if err := putSettings(ctx, tx, t, now); err != nil {
				return fmt.Errorf("settings of %s: %w", t.Name, err)
			}
		}
		st, _ := cat.Table(t.Name)
		hooks := hooksFor(cv.plugins, cat, st)
		if err := copyRecords(ctx, tx, la, st, users, func(cols []string, batch [][]any) error {
			return runHooks(ctx, cv.app, hooks, st, cols, batch, rep)
		}); err != nil {
			return fmt.Errorf("records of %s: %w", t.Name, err)
		}
	}
	for _, r := range la.Relations {
		_, err := schema.AddRelation(ctx, tx, schema.RelationInput{FromTb: r.FromTb, FromCol: r.FromCol, ToTb: r.ToTb, ToCol: r.ToCol,
			OnDelete: r.OnDelete, OnUpdate: r.OnUpdate}, now)
		if err != nil {
			return fmt.Errorf("relation %s.%s > %s.%s: %w", r.FromTb, r.FromCol, r.ToTb, r.ToCol, err)
		}
	}
	userOrNil := func(v any) any {
		if n, ok := asInt(v); ok && users[n] {
			return n
		}
		return nil
	}
	steps := []struct {
		from, to string
		fromCols []string
		toCols   []string
		fix      func([]any) []any
	}{
		{"bdus_user_table_privs", "table_privileges", []string{"id", "user_id", "table_name", "privilege", "subset"},
			[]string{"id", "user_id", "table_name", "privilege", "subset", "created_at", "updated_at"}, func(r []any) []any { return append(r, now, now) }},
		{"bdus_rs", "rs", []string{"id", "tb", "first", "second", "relation"}, []string{"id", "tb", "first", "second", "relation", "created_at"},
			func(r []any) []any { return append(r, now) }},
		{"bdus_userlinks", "manual_links", []string{"id", "tb_one", "id_one", "tb_two", "id_two", "sort", "label"},
			[]string{"id", "tb_one", "id_one", "tb_two", "id_two", "sort", "label", "created_at"}, func(r []any) []any {
				if r[5] == nil {
					r[5] = 0
				}
				return append(r, now)
			}},
		{"bdus_versions", "versions", []string{"id", "tb", "rowid", "userid", "time", "operation", "content"},
			[]string{"id", "tb", "record_id", "userid", "time", "operation", "content"}, func(r []any) []any {
				r[3] = userOrNil(r[3])
				r[4] = unixTime(r[4], now)
				if r[5] == nil || r[5] == "" {
					r[5] = "update"
				}
				r[6] = versionContent(r[6])
				return r
			}},
	}
	for _, s := range steps {
		if err := copyRows(ctx, tx, la, s.from, s.to, s.fromCols, s.toCols, s.fix); err != nil {
			return fmt.Errorf("%s: %w", s.from, err)
		}
	}
	if err := insertFiles(ctx, tx, la, cv.staged, users); err != nil {
		return fmt.Errorf("files: %w", err)
	}
	n, err := copyGeodata(ctx, tx, la)
	if err != nil {
		return fmt.Errorf("geodata: %w", err)
	}
	rep.logf("%d files, %d geodata features", len(cv.staged), n)
	if err := copyQueriesAndCharts(ctx, tx, la, users, now); err != nil {
		return err
	}
	if n, err = copyTemplates(ctx, tx, la, now); err != nil {
		return fmt.Errorf("templates: %w", err)
	}
	rep.logf("%d print templates", n)
	if err := templateFiles(ctx, cv.root, la, rep); err != nil {
		return err
	}
	if n, err = copyAssemblages(ctx, tx, la, users, rep, now); err != nil {
		return fmt.Errorf("assemblage analyses: %w", err)
	}
	rep.logf("%d assemblage analyses", n)
	libs, links, err := cv.copyZotero(ctx, tx)
	if err != nil {
		return fmt.Errorf("reference libraries: %w", err)
	}
	rep.logf("%d reference libraries, %d reference links (refmgr)", libs, links)
	return syncSequences(ctx, tx, la)
}

// putSettings applies the table's BraDypUS settings through the same
// reading of them PUT /config/table/{tb} does (order, id_field, preview
// without id, rs, geodata, zotero).
func putSettings(ctx context.Context, tx *store.DB, t *legacyTable, now time.Time) error {
	cfg := map[string]any{}
	for k, v := range t.Extra {
		switch k {
		case "rs", "geodata", "zotero", "refmgr", "backlinks", "chrono_density_path":
			if !t.IsPlugin {
				cfg[k] = v
			}
		}
	}
	if t.Order != "" && t.Order != "id" {
		cfg["order"] = t.Order
	}
	if t.IDField != "" && t.IDField != "id" {
		cfg["id_field"] = t.IDField
	}
	var preview []string
	for _, p := range t.Preview {
		if !isSystemColumn(p) {
			preview = append(preview, p)
		}
	}
	cfg["preview"] = preview
	if !t.IsPlugin {
		// Relations recorded in BraDypUS were never checked for cycles:
		// strict mode waits until an admin turns it on (issue 33).
		cfg["rs_strict"] = false
	}
	b, _ := json.Marshal(cfg)
	var in schema.TableConfig
	if err := wire.Decode(b, &in, wire.Options{}); err != nil {
		return err
	}
	_, err := schema.PutTable(ctx, tx, t.Name, in, now)
	return err
}

func copyUsers(ctx context.Context, tx *store.DB, la *legacyApp, now time.Time) (map[int64]bool, error) {
	if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("users")); err != nil {
		return nil, err
	}
	hasOAuth := la.columnExists(ctx, "bdus_users", "oauth_provider")
	q := `SELECT id, COALESCE(name, ''), COALESCE(email, ''), COALESCE(password, ''), COALESCE(privilege, 40)`
	if hasOAuth {
		q += `, oauth_provider, oauth_sub`
	} else {
		q += `, NULL, NULL`
	}
	rows, err := la.db.QueryContext(ctx, q+` FROM bdus_users ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := map[int64]bool{}
	for rows.Next() {
		u := auth.User{TokenVersion: 1, CreatedAt: now, UpdatedAt: now}
		var provider, sub sql.NullString
		if err := rows.Scan(&u.ID, &u.Name, &u.Email, &u.Password, &u.Privilege, &provider, &sub); err != nil {
			return nil, err
		}
		u.Email = auth.NormalizeEmail(u.Email)
		if provider.Valid && provider.String != "" {
			u.OAuthProvider, u.OAuthSub = &provider.String, &sub.String
		}
		if u.Password == "" {
			// An account without a password (OAuth only) gets one nobody knows.
			if u.Password, err = auth.InertHash(4); err != nil {
				return nil, err
			}
		}
		if err := tx.Gorm.WithContext(ctx).Create(&u).Error; err != nil {
			return nil, fmt.Errorf("user %d (%s): %w", u.ID, u.Email, err)
		}
		ids[u.ID] = true
	}
	return ids, rows.Err()
}

func (la *legacyApp) columnExists(ctx context.Context, table, col string) bool {
	rows, err := la.db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return false
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil && n == col {
			return true
		}
	}
	return false
}

func quoteLegacy(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// copyRows copies fromCols of a system table of the file into the Strata
// system table to (named without its prefix), through fix.
func copyRows(ctx context.Context, tx *store.DB, la *legacyApp, from, to string, fromCols, toCols []string, fix func([]any) []any) error {
	if !la.tables[from] {
		return nil
	}
	sel := make([]string, len(fromCols))
	for i, c := range fromCols {
		if la.columnExists(ctx, from, c) {
			sel[i] = quoteLegacy(c)
		} else {
			sel[i] = "NULL"
		}
	}
	rows, err := la.db.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM `+quoteLegacy(from)+` ORDER BY 1`)
	if err != nil {
		return err
	}
	defer rows.Close()
	qcols := make([]string, len(toCols))
	for i, c := range toCols {
		qcols[i] = tx.Engine.Quote(c)
	}
	insert := `INSERT INTO ` + tx.Sys(to) + ` (` + strings.Join(qcols, ", ") + `) VALUES (?` + strings.Repeat(", ?", len(toCols)-1) + `)`
	for rows.Next() {
		vals := make([]any, len(fromCols))
		ptrs := make([]any, len(fromCols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		if fix != nil {
			vals = fix(vals)
		}
		if _, err := tx.Exec(ctx, insert, vals...); err != nil {
			return err
		}
	}
	return rows.Err()
}

// copyRecords copies a user table's rows, ids kept, each value read as its
// field's storage type ("" is no value for numbers, dates and booleans);
// a creator who is no longer a user is left empty. Rows go in batches:
// each batch passes through before (the plugin features' hooks) and is
// written with multi-row inserts.
func copyRecords(ctx context.Context, tx *store.DB, la *legacyApp, t *schema.Table, users map[int64]bool, before func(cols []string, batch [][]any) error) error {
	if !la.tables[t.Name] {
		return nil
	}
	cols := slices.Clone(t.SystemColumns())
	for _, f := range t.Fields {
		cols = append(cols, f.Name)
	}
	sel := make([]string, len(cols))
	for i, c := range cols {
		if la.columnExists(ctx, t.Name, c) {
			sel[i] = quoteLegacy(c)
		} else {
			sel[i] = "NULL"
		}
	}
	rows, err := la.db.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM `+quoteLegacy(t.Name)+` ORDER BY id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	qcols := make([]string, len(cols))
	for i, c := range cols {
		qcols[i] = tx.Engine.Quote(c)
	}
	head := `INSERT INTO ` + tx.Qualify(t.Name) + ` (` + strings.Join(qcols, ", ") + `) VALUES `
	tuple := `(?` + strings.Repeat(", ?", len(cols)-1) + `)`
	// Bound parameters per statement stay well under both engines' limits.
	perInsert := max(1, 900/len(cols))
	flush := func(batch [][]any) error {
		if before != nil {
			if err := before(cols, batch); err != nil {
				return err
			}
		}
		for start := 0; start < len(batch); start += perInsert {
			part := batch[start:min(start+perInsert, len(batch))]
			args := make([]any, 0, len(part)*len(cols))
			for _, r := range part {
				args = append(args, r...)
			}
			q := head + tuple + strings.Repeat(", "+tuple, len(part)-1)
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				if len(part) == 1 {
					return fmt.Errorf("row %v: %w", part[0][0], err)
				}
				return fmt.Errorf("rows %v to %v: %w", part[0][0], part[len(part)-1][0], err)
			}
		}
		return nil
	}
	var batch [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, c := range cols {
			v := vals[i]
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			switch {
			case c == schema.ColCreator:
				if n, ok := asInt(v); ok && users[n] {
					v = n
				} else {
					v = nil
				}
			case c == schema.ColID || c == schema.ColIDLink:
			default:
				f, _ := t.Field(c)
				if v, err = storageValue(f.DBType, v); err != nil {
					return fmt.Errorf("row %v, %s: %w", vals[0], c, err)
				}
			}
			vals[i] = v
		}
		batch = append(batch, vals)
		if len(batch) == hookBatch {
			if err := flush(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return flush(batch)
	}
	return nil
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		return int64(x), x == float64(int64(x))
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	case []byte:
		return asInt(string(x))
	}
	return 0, false
}

// storageValue reads a stored BraDypUS value as a value of dbt.
func storageValue(dbt schema.DBType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	s, isText := v.(string)
	if isText && strings.TrimSpace(s) == "" && dbt != schema.DBText {
		return nil, nil
	}
	switch dbt {
	case schema.DBText:
		switch x := v.(type) {
		case string:
			return x, nil
		case map[string]any, []any:
			// A plugin's answer may hold a document (osteology's).
			b, err := json.Marshal(x)
			return string(b), err
		}
		return fmt.Sprint(v), nil
	case schema.DBInt:
		if n, ok := asInt(v); ok {
			return n, nil
		}
		if f, err := strconv.ParseFloat(fmt.Sprint(v), 64); err == nil && f == float64(int64(f)) {
			return int64(f), nil
		}
		return nil, fmt.Errorf("%q is not a whole number", fmt.Sprint(v))
	case schema.DBFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(fmt.Sprint(v)), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", fmt.Sprint(v))
		}
		return f, nil
	case schema.DBBool:
		b, err := wire.Bool(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not a boolean", fmt.Sprint(v))
		}
		return b, nil
	case schema.DBDate:
		if t, ok := v.(time.Time); ok {
			// The SQLite driver reads a column declared DATE or TIMESTAMP
			// as a time; BraDypUS wrote it as text.
			if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
				return t.Format("2006-01-02"), nil
			}
			return t.Format("2006-01-02 15:04:05"), nil
		}
		return strings.TrimSpace(fmt.Sprint(v)), nil
	}
	return v, nil
}

func unixTime(v any, fallback time.Time) time.Time {
	if n, ok := asInt(v); ok && n > 0 {
		return time.Unix(n, 0).UTC()
	}
	if s, ok := v.(string); ok {
		for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC()
			}
		}
	}
	return fallback
}

// versionContent is a BraDypUS version's content (the record as a JSON
// object) in Strata's shape {core, plugins}; anything else is kept as
// text under legacy.
func versionContent(v any) string {
	s, _ := v.(string)
	var obj map[string]any
	if json.Unmarshal([]byte(s), &obj) == nil && obj != nil {
		if _, ok := obj["core"]; ok {
			return s
		}
		b, _ := json.Marshal(map[string]any{"core": obj, "plugins": map[string]any{}})
		return string(b)
	}
	b, _ := json.Marshal(map[string]any{"core": map[string]any{}, "plugins": map[string]any{}, "legacy": s})
	return string(b)
}

// syncSequences moves PostgreSQL's id sequences past the ids copied.
func syncSequences(ctx context.Context, tx *store.DB, la *legacyApp) error {
	if tx.Engine != store.Postgres {
		return nil
	}
	var tables []string
	for _, t := range la.Tables {
		tables = append(tables, tx.Qualify(t.Name)+"|"+tx.Schema()+"."+t.Name)
	}
	for _, s := range []string{"users", "vocabularies", "table_privileges", "rs", "manual_links", "versions",
		"files", "file_links", "geodata", "saved_queries", "charts", "templates", "assemblages"} {
		tables = append(tables, tx.Sys(s)+"|"+tx.Schema()+"."+store.SystemTablePrefix+s)
	}
	for _, t := range tables {
		q, name, _ := strings.Cut(t, "|")
		if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence(?, 'id'), COALESCE((SELECT MAX("id") FROM `+q+`), 0) + 1, false)`, name); err != nil {
			return fmt.Errorf("sequence of %s: %w", name, err)
		}
	}
	return nil
}

// verify counts the rows of every converted kind before and after: the
// system tables (users, versions, files and their links, geodata, saved
// queries, charts, templates...), every table (a radiocarbon table is its
// feature's child table) and, for chronology and osteology, the rows that
// hold some of the feature's data.
func verify(ctx context.Context, db *store.DB, la *legacyApp, specs map[string]schema.FeatureSpec, rep *Report) error {
	sys := [][2]string{{"bdus_users", "users"}, {"bdus_vocabularies", "vocabularies"},
		{"bdus_user_table_privs", "table_privileges"}, {"bdus_rs", "rs"}, {"bdus_userlinks", "manual_links"},
		{"bdus_versions", "versions"}, {"bdus_files", "files"}, {"bdus_file_links", "file_links"}, {"bdus_geodata", "geodata"},
		{"bdus_queries", "saved_queries"}, {"bdus_charts", "charts"}, {"bdus_cfg_templates", "templates"},
		{"bdus_assemblage_analyses", "assemblages"}}
	type pair struct {
		label, legacy, target, where string
	}
	var pairs []pair
	for _, p := range sys {
		pairs = append(pairs, pair{p[0], p[0], db.Sys(p[1]), ""})
	}
	if la.zotero {
		pairs = append(pairs, pair{"bdus_zotero_libs", "bdus_zotero_libs", db.Sys(refmgrPlugin + "_" + refmgrLibs), ""},
			pair{"bdus_zotero_links", "bdus_zotero_links", db.Sys(refmgrPlugin + "_" + refmgrLinks), ""})
	}
	for _, t := range la.Tables {
		pairs = append(pairs, pair{t.Name, t.Name, db.Qualify(t.Name), ""})
		for _, f := range t.Features {
			var conds []string
			for _, c := range specs[f].Columns {
				if !la.columnExists(ctx, t.Name, c.Name) {
					continue // BraDypUS never added it: no data either side
				}
				q := quoteLegacy(c.Name)
				conds = append(conds, `(`+q+` IS NOT NULL AND CAST(`+q+` AS TEXT) <> '')`)
			}
			if len(conds) > 0 {
				pairs = append(pairs, pair{t.Name + " (" + f + ")", t.Name, db.Qualify(t.Name), ` WHERE ` + strings.Join(conds, " OR ")})
			}
		}
	}
	rep.Verified = true
	for _, p := range pairs {
		var before int64
		if la.tables[p.legacy] {
			if err := la.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quoteLegacy(p.legacy)+p.where).Scan(&before); err != nil {
				return fmt.Errorf("count %s: %w", p.label, err)
			}
		}
		var after int64
		if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+p.target+p.where).Scan(&after); err != nil {
			return fmt.Errorf("count %s: %w", p.label, err)
		}
		c := Count{Table: p.label, Before: before, After: after, Equal: before == after}
		rep.Verified = rep.Verified && c.Equal
		rep.Counts = append(rep.Counts, c)
	}
	return nil
}
