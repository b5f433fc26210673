package crate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxErrors bounds what the checkers report: enough to see a pattern.
const maxErrors = 20

type problems struct{ errs []error }

func (p *problems) add(format string, args ...any) {
	if len(p.errs) < maxErrors {
		p.errs = append(p.errs, fmt.Errorf(format, args...))
	}
}

func (p *problems) err() error { return errors.Join(p.errs...) }

// readPackage decodes datapackage.json into the package types; constraint
// values come back in their lexical form.
func readPackage(fsys fs.FS) (Package, error) {
	b, err := fs.ReadFile(fsys, "datapackage.json")
	if err != nil {
		return Package{}, fmt.Errorf("check package: %w", err)
	}
	var raw struct {
		Resources []struct {
			Name, Path, Hash string
			Bytes            *int64
			Format, Encoding string
			MediaType        string `json:"mediatype"`
			Dialect          json.RawMessage
			Schema           struct {
				Fields []struct {
					Name, Type, Format string
					Constraints        *struct {
						Required, Unique     bool
						Enum                 []json.RawMessage
						Minimum, Maximum     json.RawMessage
						MinLength, MaxLength *int
						Pattern              string
					}
				}
				PrimaryKey    json.RawMessage
				ForeignKeys   []ForeignKey
				MissingValues []string
			}
		}
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Package{}, fmt.Errorf("check package: datapackage.json: %w", err)
	}
	lexical := func(m json.RawMessage) string {
		var s string
		if json.Unmarshal(m, &s) == nil {
			return s
		}
		return string(m)
	}
	var p Package
	for _, r := range raw.Resources {
		if r.Format != "csv" || r.Encoding != "utf-8" || r.MediaType != "text/csv" || r.Dialect != nil {
			return Package{}, fmt.Errorf("check package: resource %q: expected csv, utf-8, text/csv and the default dialect", r.Name)
		}
		if r.Bytes == nil || !strings.HasPrefix(r.Hash, "sha256:") {
			return Package{}, fmt.Errorf("check package: resource %q: bytes and a sha256 hash are expected", r.Name)
		}
		res := Resource{Name: r.Name, Path: r.Path, Hash: r.Hash, Bytes: *r.Bytes}
		for _, f := range r.Schema.Fields {
			fl := Field{Name: f.Name, Type: f.Type, Format: f.Format}
			if fl.Type == "" {
				fl.Type = TypeString
			}
			if c := f.Constraints; c != nil {
				fl.Constraints = &Constraints{Required: c.Required, Unique: c.Unique, MinLength: c.MinLength, MaxLength: c.MaxLength, Pattern: c.Pattern}
				for _, e := range c.Enum {
					fl.Constraints.Enum = append(fl.Constraints.Enum, lexical(e))
				}
				if c.Minimum != nil {
					fl.Constraints.Minimum = lexical(c.Minimum)
				}
				if c.Maximum != nil {
					fl.Constraints.Maximum = lexical(c.Maximum)
				}
			}
			res.Schema.Fields = append(res.Schema.Fields, fl)
		}
		// primaryKey may be a string or an array.
		if len(r.Schema.PrimaryKey) > 0 {
			var one string
			if json.Unmarshal(r.Schema.PrimaryKey, &one) == nil {
				res.Schema.PrimaryKey = []string{one}
			} else if err := json.Unmarshal(r.Schema.PrimaryKey, &res.Schema.PrimaryKey); err != nil {
				return Package{}, fmt.Errorf("check package: resource %q: primaryKey: %w", r.Name, err)
			}
		}
		res.Schema.ForeignKeys = r.Schema.ForeignKeys
		for i := range res.Schema.ForeignKeys {
			if res.Schema.ForeignKeys[i].Reference.Resource == "" {
				res.Schema.ForeignKeys[i].Reference.Resource = r.Name
			}
		}
		res.Schema.MissingValues = r.Schema.MissingValues
		if res.Schema.MissingValues != nil && !slices.Equal(res.Schema.MissingValues, []string{""}) {
			return Package{}, fmt.Errorf("check package: resource %q: only the default missingValues [\"\"] is supported", r.Name)
		}
		p.Resources = append(p.Resources, res)
	}
	p.Name = "check"
	if err := checkPackage(p); err != nil {
		return Package{}, fmt.Errorf("check package: %w", err)
	}
	return p, nil
}

// keyOf is the identity of a tuple of parsed values: their canonical text
// joined by NUL (which no cell holds), so "1" and "+1" are the same integer.
func keyOf(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case time.Time:
			parts[i] = x.Format(time.RFC3339Nano)
		case float64:
			parts[i] = strconv.FormatFloat(x, 'g', -1, 64)
		default:
			b, _ := json.Marshal(x)
			parts[i] = string(b)
		}
	}
	return strings.Join(parts, "\x00")
}

// CheckPackage reads the Frictionless package at the root of fsys
// (datapackage.json and the CSVs it names) as a consumer would and reports
// what is wrong: a file's size or SHA-256 differing from the descriptor, a
// header not naming the schema's fields in order, a row of the wrong
// width, a cell not parsing as its type or breaking a constraint, duplicate
// unique values or primary keys (or a missing part of a primary key), and
// foreign keys that resolve to no row of the referenced resource (a key
// whose fields are all missing refers to nothing and is allowed).
//
// It does not validate datapackage.json against the JSON schema of the
// profile; the tests do that with the profile files they hold.
func CheckPackage(fsys fs.FS) error {
	p, err := readPackage(fsys)
	if err != nil {
		return err
	}
	byName := map[string]Resource{}
	for _, r := range p.Resources {
		byName[r.Name] = r
	}
	// targets[resource][fields joined] collects the key tuples of every
	// referenced field list; uses the foreign-key values to check.
	targets := map[string]map[string]map[string]bool{}
	var uses []*fkUse
	for _, r := range p.Resources {
		for _, fk := range r.Schema.ForeignKeys {
			t := fk.Reference.Resource
			if targets[t] == nil {
				targets[t] = map[string]map[string]bool{}
			}
			targets[t][strings.Join(fk.Reference.Fields, "\x00")] = map[string]bool{}
			uses = append(uses, &fkUse{from: r.Name, fk: fk, values: map[string]int{}})
		}
	}
	var pr problems
	for _, r := range p.Resources {
		var mine []*fkUse
		for _, u := range uses {
			if u.from == r.Name {
				mine = append(mine, u)
			}
		}
		checkResource(fsys, r, targets[r.Name], mine, &pr)
	}
	for _, u := range uses {
		set := targets[u.fk.Reference.Resource][strings.Join(u.fk.Reference.Fields, "\x00")]
		keys := make([]string, 0, len(u.values))
		for k := range u.values {
			if !set[k] {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			pr.add("resource %q row %d: foreign key %v = %q matches no row of %q", u.from, u.values[k], u.fk.Fields, strings.ReplaceAll(k, "\x00", ","), u.fk.Reference.Resource)
		}
	}
	return pr.err()
}

type fkUse struct {
	from   string
	fk     ForeignKey
	values map[string]int // key → first row holding it
}

func fieldIndexes(fields []Field, names []string) []int {
	idx := make([]int, len(names))
	for i, n := range names {
		idx[i] = slices.IndexFunc(fields, func(f Field) bool { return f.Name == n })
	}
	return idx
}

// checkResource reads one CSV: size and hash, header, cells, uniqueness,
// and it fills the key sets other resources refer to and the foreign-key
// values of this one.
func checkResource(fsys fs.FS, r Resource, targetSets map[string]map[string]bool, mine []*fkUse, pr *problems) {
	if !fs.ValidPath(r.Path) {
		pr.add("resource %q: path %q is not a clean relative path", r.Name, r.Path)
		return
	}
	f, err := fsys.Open(r.Path)
	if err != nil {
		pr.add("resource %q: %v", r.Name, err)
		return
	}
	defer f.Close()
	h := sha256.New()
	var n int64
	src := io.TeeReader(f, io.MultiWriter(h, countWriter{&n}))
	fields := r.Schema.Fields
	type uniq struct {
		name string
		idx  []int
		seen map[string]int
	}
	var uniqs []uniq
	for _, fl := range fields {
		if fl.Constraints != nil && fl.Constraints.Unique {
			uniqs = append(uniqs, uniq{name: fl.Name, idx: fieldIndexes(fields, []string{fl.Name}), seen: map[string]int{}})
		}
	}
	pkIdx := fieldIndexes(fields, r.Schema.PrimaryKey)
	pkSeen := map[string]int{}
	type tset struct {
		idx []int
		set map[string]bool
	}
	var tsets []tset
	for joined, set := range targetSets {
		tsets = append(tsets, tset{fieldIndexes(fields, strings.Split(joined, "\x00")), set})
	}
	fkIdx := make([][]int, len(mine))
	for i, u := range mine {
		fkIdx[i] = fieldIndexes(fields, u.fk.Fields)
	}
	vals := make([]any, len(fields))
	pick := func(idx []int) ([]any, int) {
		out := make([]any, len(idx))
		missing := 0
		for i, k := range idx {
			out[i] = vals[k]
			if vals[k] == nil {
				missing++
			}
		}
		return out, missing
	}
	err = ReadCSV(src, func(row int, cells []string) error {
		if row == 1 {
			names := make([]string, len(fields))
			for i, fl := range fields {
				names[i] = fl.Name
			}
			if !slices.Equal(cells, names) {
				pr.add("resource %q: header %q, schema fields %q", r.Name, cells, names)
			}
			return nil
		}
		if len(cells) != len(fields) {
			pr.add("resource %q row %d: %d cells for %d fields", r.Name, row, len(cells), len(fields))
			return nil
		}
		ok := true
		for i, fl := range fields {
			if err := CheckCell(fl, cells[i]); err != nil {
				pr.add("resource %q row %d: %v", r.Name, row, err)
				ok = false
				continue
			}
			vals[i], _ = ParseCell(fl, cells[i])
		}
		if !ok {
			return nil
		}
		for _, u := range uniqs {
			v, missing := pick(u.idx)
			if missing > 0 {
				continue
			}
			k := keyOf(v)
			if first, dup := u.seen[k]; dup {
				pr.add("resource %q row %d: %q repeats the value of row %d (unique)", r.Name, row, u.name, first)
			} else {
				u.seen[k] = row
			}
		}
		if len(pkIdx) > 0 {
			v, missing := pick(pkIdx)
			k := keyOf(v)
			if missing > 0 {
				pr.add("resource %q row %d: primary key %v has a missing value", r.Name, row, r.Schema.PrimaryKey)
			} else if first, dup := pkSeen[k]; dup {
				pr.add("resource %q row %d: primary key %v repeats row %d", r.Name, row, r.Schema.PrimaryKey, first)
			} else {
				pkSeen[k] = row
			}
		}
		for _, t := range tsets {
			if v, missing := pick(t.idx); missing == 0 {
				t.set[keyOf(v)] = true
			}
		}
		for i, u := range mine {
			v, missing := pick(fkIdx[i])
			if missing == len(v) {
				continue
			}
			k := keyOf(v)
			if _, seen := u.values[k]; !seen {
				u.values[k] = row
			}
		}
		return nil
	})
	if err != nil {
		pr.add("resource %q: %v", r.Name, err)
		// Read the rest, so that the size and hash are still checked.
		if _, err := io.Copy(io.Discard, src); err != nil {
			return
		}
	}
	if n != r.Bytes {
		pr.add("resource %q: %d bytes, the descriptor says %d", r.Name, n, r.Bytes)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != r.Hash {
		pr.add("resource %q: hash %s, the descriptor says %s", r.Name, got, r.Hash)
	}
}

// CheckCrate reads ro-crate-metadata.json at the root of fsys and checks
// the RO-Crate 1.2 rules this package writes to: the context; a flattened
// @graph (every entity an object with a string @id, seen once; property
// values are strings, numbers, booleans, {"@id"} references or arrays of
// them, never nested entities); the descriptor (CreativeWork, about ./,
// conformsTo the 1.2 permalink); the root data entity (Dataset with name,
// description, an ISO 8601 datePublished, a licence); every File and
// directory Dataset with a relative @id naming what exists in fsys, with a
// matching contentSize and sha256; every data entity reachable from the
// root through hasPart; every relative reference resolving to an entity of
// the graph; and every regular file of fsys (the metadata document aside)
// described.
func CheckCrate(fsys fs.FS) error {
	b, err := fs.ReadFile(fsys, MetadataFile)
	if err != nil {
		return fmt.Errorf("check crate: %w", err)
	}
	var doc struct {
		Context any              `json:"@context"`
		Graph   []map[string]any `json:"@graph"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("check crate: %s: %w", MetadataFile, err)
	}
	var pr problems
	if doc.Context != ROCrateContext {
		pr.add("@context is %v, want %q", doc.Context, ROCrateContext)
	}
	ents := map[string]map[string]any{}
	for i, e := range doc.Graph {
		id, ok := e["@id"].(string)
		if !ok || id == "" {
			pr.add("@graph[%d] has no @id", i)
			continue
		}
		if _, dup := ents[id]; dup {
			pr.add("@id %q appears twice", id)
		}
		ents[id] = e
		for k, v := range e {
			if k == "@id" {
				continue
			}
			if !flatValue(v) {
				pr.add("%q: property %q holds a nested entity (the graph must be flat)", id, k)
			}
		}
	}
	refID := func(v any) string {
		m, _ := v.(map[string]any)
		s, _ := m["@id"].(string)
		return s
	}
	desc := ents[MetadataFile]
	switch {
	case desc == nil:
		pr.add("no descriptor %q", MetadataFile)
	default:
		if !hasType(desc, "CreativeWork") {
			pr.add("descriptor @type is %v, want CreativeWork", desc["@type"])
		}
		if refID(desc["about"]) != "./" {
			pr.add("descriptor about is %v, want {\"@id\": \"./\"}", desc["about"])
		}
		if refID(desc["conformsTo"]) != ROCrateSpec {
			pr.add("descriptor conformsTo is %v, want {\"@id\": %q}", desc["conformsTo"], ROCrateSpec)
		}
	}
	root := ents["./"]
	if root == nil {
		return errors.Join(append(pr.errs, errors.New("no root data entity ./"))...)
	}
	if !hasType(root, "Dataset") {
		pr.add("root @type is %v, want Dataset", root["@type"])
	}
	for _, k := range []string{"name", "description"} {
		if s, _ := root[k].(string); strings.TrimSpace(s) == "" {
			pr.add("root has no %s", k)
		}
	}
	if s, ok := root["datePublished"].(string); !ok || !iso8601(s) {
		pr.add("root datePublished %v is not a single ISO 8601 date", root["datePublished"])
	}
	if root["license"] == nil {
		pr.add("root has no license")
	} else if l := refID(root["license"]); l != "" && ents[l] == nil {
		pr.add("root license %q is not described", l)
	}
	// Reachability through hasPart, from the root.
	reached := map[string]bool{"./": true}
	queue := []string{"./"}
	for len(queue) > 0 {
		e := ents[queue[0]]
		queue = queue[1:]
		for _, v := range asList(e["hasPart"]) {
			id := refID(v)
			if id != "" && !reached[id] {
				reached[id] = true
				if ents[id] != nil {
					queue = append(queue, id)
				}
			}
		}
	}
	described := map[string]bool{}
	ids := make([]string, 0, len(ents))
	for id := range ents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		e := ents[id]
		for k, v := range e {
			for _, x := range asList(v) {
				if r := refID(x); r != "" && !isAbsolute(r) && ents[r] == nil {
					pr.add("%q: %s refers to %q, which is not in the graph", id, k, r)
				}
			}
		}
		isFile, isDir := hasType(e, "File"), hasType(e, "Dataset")
		if id == "./" || !(isFile || isDir) || strings.HasPrefix(id, "#") || isAbsolute(id) {
			continue
		}
		if !reached[id] {
			pr.add("data entity %q is not reachable from the root through hasPart", id)
		}
		u, err := url.Parse(id)
		if err != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			pr.add("data entity %q: not a relative path reference", id)
			continue
		}
		p := strings.TrimSuffix(u.Path, "/")
		if !fs.ValidPath(p) {
			pr.add("data entity %q: path %q is not clean", id, p)
			continue
		}
		info, err := fs.Stat(fsys, p)
		if err != nil {
			pr.add("data entity %q: %v", id, err)
			continue
		}
		if isDir {
			if !info.IsDir() || !strings.HasSuffix(id, "/") {
				pr.add("directory %q: not a directory, or its @id does not end with /", id)
			}
			continue
		}
		if info.IsDir() {
			pr.add("file %q is a directory", id)
			continue
		}
		described[p] = true
		if s, ok := e["contentSize"].(string); ok && s != strconv.FormatInt(info.Size(), 10) {
			pr.add("file %q: contentSize %s, the file has %d bytes", id, s, info.Size())
		}
		if want, ok := e["sha256"].(string); ok {
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				pr.add("file %q: %v", id, err)
				continue
			}
			sum := sha256.Sum256(data)
			if got := hex.EncodeToString(sum[:]); got != want {
				pr.add("file %q: sha256 %s, the file's is %s", id, want, got)
			}
		}
	}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && p != MetadataFile && !described[p] {
			pr.add("file %q is in the crate but not described", p)
		}
		return nil
	})
	if err != nil {
		pr.add("walking the crate: %v", err)
	}
	return pr.err()
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

func hasType(e map[string]any, t string) bool {
	for _, x := range asList(e["@type"]) {
		if x == t {
			return true
		}
	}
	return false
}

// flatValue: literals, {"@id": …} references, or arrays of those.
func flatValue(v any) bool {
	switch x := v.(type) {
	case []any:
		for _, y := range x {
			if _, nested := y.([]any); nested || !flatValue(y) {
				return false
			}
		}
		return true
	case map[string]any:
		_, ok := x["@id"].(string)
		return ok && len(x) == 1
	}
	return true
}

func isAbsolute(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

// iso8601 accepts the forms RO-Crate allows for datePublished: a year, a
// year-month, a date, or a timestamp.
func iso8601(s string) bool {
	for _, layout := range []string{"2006", "2006-01", time.DateOnly, time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999999"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}
