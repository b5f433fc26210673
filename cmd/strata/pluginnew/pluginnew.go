// Package pluginnew writes the skeleton of a new Strata plugin (strata
// plugin new NAME): a module of its own requiring pluginsdk by version,
// with a plugin that has a feature with a column and a BeforeSave hook, a
// filter operator and a route, its tests (plugintest), a Makefile and a
// README. The templates are embedded; the skeleton builds and its tests
// pass as written (cmd/strata's TestPluginNewBuildsAndPasses).
package pluginnew

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/strata-archaeo/strata/pluginsdk"
)

//go:embed templates/*.tmpl
var templates embed.FS

// files maps each template to the file it writes.
var files = map[string]string{
	"main.go.tmpl":      "main.go",
	"main_test.go.tmpl": "main_test.go",
	"go.mod.tmpl":       "go.mod",
	"Makefile.tmpl":     "Makefile",
	"README.md.tmpl":    "README.md",
	"gitignore.tmpl":    ".gitignore",
}

// namePattern is the SDK's rule for plugin names (Manifest.Validate); the
// name also makes the column NAME_note and the operator _NAME_contains.
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{1,30}$`)

// modulePattern is a plausible module path: slash-separated elements of
// letters, digits and . _ ~ -, the first not starting with a dot.
var modulePattern = regexp.MustCompile(`^[A-Za-z0-9_~-][A-Za-z0-9._~-]*(/[A-Za-z0-9._~-]+)*$`)

// ErrExists is returned when the target folder holds any of the files.
var ErrExists = errors.New("the folder already holds a file of the skeleton")

// Params are what the skeleton is made of.
type Params struct {
	Name   string // the plugin's name (manifest, feature, route prefix)
	Module string // the Go module path; default example.org/NAME
}

// data is what the templates see.
type data struct {
	Name, Module, SDKVersion, Label, Column, Operator string
	MaxLen                                            int
}

// CheckName reports why name cannot name a plugin, or nil.
func CheckName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("plugin name %q: a lower-case letter, then 1 to 30 lower-case letters, digits or underscores", name)
	}
	return nil
}

// Write writes the skeleton into dir (created if missing) and returns the
// paths written, relative to dir. It writes nothing when a file of the
// skeleton is already there (ErrExists).
func Write(dir string, p Params) ([]string, error) {
	if err := CheckName(p.Name); err != nil {
		return nil, err
	}
	if p.Module == "" {
		p.Module = "example.org/" + p.Name
	}
	if !modulePattern.MatchString(p.Module) || strings.HasPrefix(p.Module, ".") {
		return nil, fmt.Errorf("module path %q is not a Go module path (e.g. example.org/%s)", p.Module, p.Name)
	}
	d := data{Name: p.Name, Module: p.Module, SDKVersion: pluginsdk.Version,
		Label:  strings.ToUpper(p.Name[:1]) + strings.ReplaceAll(p.Name[1:], "_", " "),
		Column: p.Name + "_note", Operator: "_" + p.Name + "_contains", MaxLen: 200}
	names := make([]string, 0, len(files))
	for t := range files {
		names = append(names, t)
	}
	sort.Strings(names)
	out := map[string][]byte{}
	for _, t := range names {
		b, err := render(t, d)
		if err != nil {
			return nil, err
		}
		out[files[t]] = b
	}
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			return nil, fmt.Errorf("%w: %s", ErrExists, filepath.Join(dir, f))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, t := range names {
		f := files[t]
		if err := os.WriteFile(filepath.Join(dir, f), out[f], 0o644); err != nil {
			return written, err
		}
		written = append(written, f)
	}
	sort.Strings(written)
	return written, nil
}

// render runs one template; Go files are gofmt'ed, so a template's
// layout cannot leave the skeleton unformatted. The delimiters are [[ ]]:
// Go's composite literals are full of {{ }}.
func render(name string, d data) ([]byte, error) {
	src, err := fs.ReadFile(templates, "templates/"+name)
	if err != nil {
		return nil, err
	}
	t, err := template.New(name).Delims("[[", "]]").Option("missingkey=error").Parse(string(src))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		return nil, err
	}
	if strings.HasSuffix(files[name], ".go") {
		return format.Source(buf.Bytes())
	}
	return buf.Bytes(), nil
}
