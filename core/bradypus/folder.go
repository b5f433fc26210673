// Package bradypus brings a BraDypUS application into Strata: it finds
// BraDypUS application folders in the data folder, and its major upgrade
// (SPEC §3.7, §4.8) converts one into a Strata application.
//
// A BraDypUS 5 folder, as BraDypUS's own CreateApp and migrations lay it
// out (read from its source, lad-sapienza/bdus-api): config.json (the
// definition, db_engine, bdus_version; BraDypUS 4 has cfg/config.json or
// cfg/app_data.json and no bdus_version), db/bdus.sqlite with the bdus_*
// system tables (configuration in bdus_cfg_tables, bdus_cfg_fields,
// bdus_cfg_relations) and the user tables, files/ with the uploads.
//
// What the upgrade converts, and what it refuses rather than lose, is in
// Upgrade's comment; how a BraDypUS 4 folder is read, in legacy4.go.
package bradypus

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/errs"
)

// FolderDir is where BraDypUS folders are placed (or linked, by strata app
// adopt) under the data folder; folders placed in the data folder itself
// are found too.
const FolderDir = "bradypus"

// Folder is a BraDypUS application folder.
type Folder struct {
	Name       string `json:"name"`
	Dir        string `json:"dir"`
	DBPath     string `json:"db_path"`
	Definition string `json:"definition"`
	// Version is config.json's bdus_version ("" for BraDypUS 4).
	Version string `json:"version"`
	Engine  string `json:"db_engine"`
}

// Major is the BraDypUS major version of the folder (4 without a version).
func (f *Folder) Major() int {
	if f.Version == "" {
		return 4
	}
	var n int
	if _, err := fmt.Sscanf(f.Version, "%d", &n); err != nil {
		return 4
	}
	return n
}

var ErrNotFolder = errs.New(errs.Invalid, "not_a_bradypus_folder", "the folder is not a BraDypUS application (config.json and db/bdus.sqlite)")

// configFiles are the places a BraDypUS version keeps its config.json,
// newest first (BraDypUS's own Login::listApps probes them in this order).
var configFiles = []string{"config.json", "cfg/config.json", "cfg/app_data.json"}

// dbFile is the folder's database.
const dbFile = "db/bdus.sqlite"

// Inspect reads dir as a BraDypUS application folder named name. Its
// database and configuration are read as every entry of the folder is
// (confine.go): a link, or anything but a regular file, makes it no
// BraDypUS folder, with the reason in the detail.
func Inspect(dir, name string) (*Folder, error) {
	r, err := openFolder(dir)
	if err != nil {
		return nil, ErrNotFolder.With("detail", "cannot open "+dir+": "+err.Error())
	}
	defer r.Close()
	if _, err := r.stat(dbFile); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNotFolder.With("detail", "no db/bdus.sqlite in "+dir)
		}
		return nil, ErrNotFolder.With("detail", err.Error())
	}
	for _, c := range configFiles {
		raw, err := r.readFile(c)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if _, ok := asRefused(err); ok {
			return nil, ErrNotFolder.With("detail", err.Error())
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", c, err)
		}
		var cfg map[string]any
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, ErrNotFolder.With("detail", c+" is not JSON: "+err.Error())
		}
		f := &Folder{Name: name, Dir: dir, DBPath: filepath.Join(dir, filepath.FromSlash(dbFile)), Engine: "sqlite"}
		f.Definition, _ = cfg["definition"].(string)
		if v, ok := cfg["bdus_version"].(string); ok {
			f.Version = v
		}
		if e, ok := cfg["db_engine"].(string); ok && e != "" {
			f.Engine = e
		}
		return f, nil
	}
	return nil, ErrNotFolder.With("detail", "no config.json in "+dir)
}

// Find lists the BraDypUS folders of the data folder whose names are
// valid application names, by name (a folder in bradypus/ wins over one of
// the same name in the data folder itself).
func Find(dataDir string) ([]*Folder, error) {
	if dataDir == "" {
		return nil, nil
	}
	found := map[string]*Folder{}
	for _, base := range []string{dataDir, filepath.Join(dataDir, FolderDir)} {
		entries, err := os.ReadDir(base)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || apps.ValidateName(name) != nil {
				continue
			}
			f, err := Inspect(filepath.Join(base, name), name)
			if err != nil {
				continue
			}
			found[name] = f
		}
	}
	out := make([]*Folder, 0, len(found))
	for _, f := range found {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Lookup finds the BraDypUS folder named name in the data folder.
func Lookup(dataDir, name string) (*Folder, bool) {
	if dataDir == "" || apps.ValidateName(name) != nil {
		return nil, false
	}
	for _, base := range []string{filepath.Join(dataDir, FolderDir), dataDir} {
		if f, err := Inspect(filepath.Join(base, name), name); err == nil {
			return f, true
		}
	}
	return nil, false
}

// Adopt registers the BraDypUS folder at path under name (its base name
// when empty) by linking it into the data folder's bradypus/ folder.
func Adopt(dataDir, path, name string) (*Folder, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = strings.ToLower(filepath.Base(abs))
	}
	if err := apps.ValidateName(name); err != nil {
		return nil, err
	}
	f, err := Inspect(abs, name)
	if err != nil {
		return nil, err
	}
	if _, ok := Lookup(dataDir, name); ok {
		return nil, errs.New(errs.Conflict, "app_exists", "a BraDypUS folder of that name is already in the data folder")
	}
	if err := os.MkdirAll(filepath.Join(dataDir, FolderDir), 0o700); err != nil {
		return nil, err
	}
	link := filepath.Join(dataDir, FolderDir, name)
	if err := os.Symlink(abs, link); err != nil {
		return nil, err
	}
	f.Dir = link
	return f, nil
}
