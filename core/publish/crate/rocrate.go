package crate

import (
	"cmp"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// RO-Crate 1.2 identifiers.
const (
	// ROCrateContext is the JSON-LD context every RO-Crate 1.2 metadata
	// document names.
	ROCrateContext = "https://w3id.org/ro/crate/1.2/context"
	// ROCrateSpec is the conformsTo of the metadata descriptor.
	ROCrateSpec = "https://w3id.org/ro/crate/1.2"
	// MetadataFile is the name (and @id) of the metadata document.
	MetadataFile = "ro-crate-metadata.json"
)

// Profile URIs for File.ConformsTo. Each one used gets a contextual entity
// of type Profile with the name below.
const (
	ProfileFrictionlessPackage = "https://datapackage.org/profiles/2.0/datapackage.json"
	ProfileFrictionlessTable   = "https://datapackage.org/profiles/2.0/tableschema.json"
	ProfileGeoJSON             = "https://www.rfc-editor.org/rfc/rfc7946"
	ProfileLinkedArt           = "https://linked.art/ns/v1/linked-art.json"
	ProfileIIIFPresentation3   = "http://iiif.io/api/presentation/3/context.json"
	ProfileIIIFImage3          = "http://iiif.io/api/image/3/context.json"
	ProfileDataCite4           = "http://datacite.org/schema/kernel-4"
)

var knownProfiles = map[string]string{
	ProfileFrictionlessPackage: "Frictionless Data Package 2.0",
	ProfileFrictionlessTable:   "Frictionless Table Schema",
	ProfileGeoJSON:             "GeoJSON (RFC 7946)",
	ProfileLinkedArt:           "Linked Art",
	ProfileIIIFPresentation3:   "IIIF Presentation API 3.0",
	ProfileIIIFImage3:          "IIIF Image API 3.0",
	ProfileDataCite4:           "DataCite Metadata Schema 4",
}

// License is a licence: the URI identifies it (e.g.
// https://creativecommons.org/licenses/by/4.0/), Name is its human name,
// SPDX its SPDX identifier (CC-BY-4.0), Description a sentence about it.
type License struct {
	URI, Name, SPDX, Description string
}

// Organization is a publisher or an affiliation. ID is its persistent URI
// (a ROR id preferably); without one it gets a local "#organization-…" id
// derived from its name.
type Organization struct {
	ID, Name, URL string
}

// Person is an author. ORCID is the bare iD (0000-0002-1825-0097) or its
// https://orcid.org/ URL; when given it is the person's @id. Without it the
// person gets a local "#author-N" id (N its position among the authors).
type Person struct {
	Name, GivenName, FamilyName, ORCID, Email string
	Affiliation                               *Organization
}

// Place is the spatial coverage: a name and an optional WGS 84 bounding box
// (all four zero means no box).
type Place struct {
	Name                     string
	South, West, North, East float64
}

// Directory names and describes a directory of the crate (Path without a
// trailing slash, e.g. "records"). Directories not listed still get a
// Dataset entity named after their path.
type Directory struct {
	Path, Name, Description string
}

// Profile names a conformsTo URI used by files; known profiles (the
// Profile… constants) are named already.
type Profile struct {
	URI, Name string
}

// Dataset is the root data entity of the crate: the snapshot as a whole.
type Dataset struct {
	Name, Description string
	License           License
	DatePublished     time.Time
	Version           string
	// CiteAs is the URL to cite: the DOI URL, or the landing page.
	CiteAs string
	// Identifier is the persistent identifier (a DOI URL such as
	// https://doi.org/10.1234/abc, or another URI); written as a
	// PropertyValue entity.
	Identifier string
	// URL is the landing page.
	URL       string
	Authors   []Person
	Publisher *Organization
	Keywords  []string
	// PreviousVersion is the URI of the snapshot this one follows,
	// written as isBasedOn.
	PreviousVersion string
	// Temporal is the temporalCoverage: an ISO 8601 interval
	// ("-0800/-0450") or text.
	Temporal string
	Spatial  *Place
	// ConformsTo lists RO-Crate profiles the crate as a whole follows
	// (RO-Crate 1.2 puts them on the root, not on the descriptor).
	ConformsTo  []string
	Directories []Directory
	Profiles    []Profile
}

// File describes one file of the crate.
type File struct {
	// Path is the slash-separated path inside the crate ("tables/finds.csv").
	Path                              string
	Name, Description, EncodingFormat string
	// ConformsTo lists profile URIs (the Profile… constants or others).
	ConformsTo  []string
	ContentSize int64
	// SHA256 is the lowercase hex digest, optional.
	SHA256 string
}

var (
	orcidRe = regexp.MustCompile(`^(?:https://orcid\.org/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])$`)
	hexRe   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	doiRe   = regexp.MustCompile(`^https://doi\.org/(10\.\S+)$`)
)

// ORCIDURI checks an ORCID iD (bare or as a URL), its check digit
// included, and returns it as https://orcid.org/….
func ORCIDURI(s string) (string, error) {
	m := orcidRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", fmt.Errorf("ORCID %q: not of the form 0000-0000-0000-000X", s)
	}
	digits := strings.ReplaceAll(m[1], "-", "")
	// ISO 7064 MOD 11-2, as ORCID documents it.
	total := 0
	for _, c := range digits[:15] {
		total = (total + int(c-'0')) * 2
	}
	check := (12 - total%11) % 11
	want := byte('0' + check)
	if check == 10 {
		want = 'X'
	}
	if digits[15] != want {
		return "", fmt.Errorf("ORCID %q: wrong check digit", s)
	}
	return "https://orcid.org/" + m[1], nil
}

// CheckPath reports whether p is a usable crate path: relative, slash
// separated, clean (no empty, "." or ".." segments), valid UTF-8 without
// control characters, and not the metadata document itself.
func CheckPath(p string) error {
	if p == "" {
		return fmt.Errorf("empty path")
	}
	if !utf8.ValidString(p) {
		return fmt.Errorf("path %q: invalid UTF-8", p)
	}
	if p == MetadataFile {
		return fmt.Errorf("path %q: reserved for the metadata document", p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return fmt.Errorf("path %q: control character or backslash", p)
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("path %q: empty, . or .. segment (paths are relative and clean)", p)
		}
	}
	return nil
}

// PathID returns the @id of a crate path: a relative IRI reference whose
// segments are percent-encoded where an IRI path segment needs it. ASCII
// outside the unreserved and sub-delimiter sets is encoded, and so are ":"
// (a colon in the first segment would read as a scheme) and non-ASCII
// characters that RFC 3987 does not allow in IRIs; other non-ASCII
// characters stay as UTF-8, as RO-Crate 1.2 prefers ("面试.mp4").
func PathID(p string) string {
	clean := true
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= utf8.RuneSelf || !(c == '/' || isUnreserved(c) || strings.IndexByte("!$&'()*+,;=@", c) >= 0) {
			clean = false
			break
		}
	}
	if clean {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if c == '/' || isUnreserved(c) || strings.IndexByte("!$&'()*+,;=@", c) >= 0 {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "%%%02X", c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(p[i:])
		if isUCSChar(r) {
			b.WriteString(p[i : i+size])
		} else {
			for k := 0; k < size; k++ {
				fmt.Fprintf(&b, "%%%02X", p[i+k])
			}
		}
		i += size
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// isUCSChar is RFC 3987's ucschar: the non-ASCII characters an IRI may hold
// unencoded.
func isUCSChar(r rune) bool {
	switch {
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFEF:
		return true
	case r >= 0x10000 && r <= 0xEFFFD:
		return r&0xFFFF <= 0xFFFD
	}
	return false
}

// entity is a small contextual entity, kept in memory until written.
type entity struct {
	id, typ string
	props   []prop
}

type prop struct {
	key string
	val any // string, ref, []ref, []string
}

type ref string

// WriteMetadata writes ro-crate-metadata.json for an attached RO-Crate 1.2
// package: the descriptor, the root data entity from d, a Dataset entity per
// directory, a File entity per file, and the contextual entities they
// reference (licence, identifier, people, organisations, profiles, place,
// previous version), as one flattened @graph.
//
// files may be in any order and is not modified; the output is sorted by
// path, so the same inputs give the same bytes. Only the file list (plus a
// sorted copy of small structs) is held in memory; the document streams.
func WriteMetadata(w io.Writer, d Dataset, files []File) error {
	if err := checkDataset(d); err != nil {
		return err
	}
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	dirSet := map[string]bool{}
	profiles := map[string]string{}
	for _, p := range d.Profiles {
		profiles[p.URI] = p.Name
	}
	usedProfiles := map[string]bool{}
	for i, f := range sorted {
		if err := CheckPath(f.Path); err != nil {
			return fmt.Errorf("ro-crate: file %d: %w", i, err)
		}
		if i > 0 && sorted[i-1].Path == f.Path {
			return fmt.Errorf("ro-crate: file %q listed twice", f.Path)
		}
		if f.ContentSize < 0 {
			return fmt.Errorf("ro-crate: file %q: negative size", f.Path)
		}
		if f.SHA256 != "" && !hexRe.MatchString(f.SHA256) {
			return fmt.Errorf("ro-crate: file %q: sha256 %q is not 64 lowercase hex digits", f.Path, f.SHA256)
		}
		for _, u := range f.ConformsTo {
			if err := checkAbsURI(u); err != nil {
				return fmt.Errorf("ro-crate: file %q: conformsTo: %w", f.Path, err)
			}
			usedProfiles[u] = true
		}
		for dir := path.Dir(f.Path); dir != "."; dir = path.Dir(dir) {
			if dirSet[dir] {
				break
			}
			dirSet[dir] = true
		}
	}
	dirs := make([]string, 0, len(dirSet))
	for dir := range dirSet {
		dirs = append(dirs, dir)
	}
	slices.Sort(dirs)
	// A path both a file and a directory cannot exist in a zip or on disk.
	for _, dir := range dirs {
		if _, found := slices.BinarySearchFunc(sorted, dir, func(f File, p string) int { return strings.Compare(f.Path, p) }); found {
			return fmt.Errorf("ro-crate: %q is both a file and a directory", dir)
		}
	}
	dirInfo := map[string]Directory{}
	for _, di := range d.Directories {
		if !dirSet[di.Path] {
			return fmt.Errorf("ro-crate: directory %q is described but holds no file", di.Path)
		}
		dirInfo[di.Path] = di
	}

	ctx, err := contextual(d, usedProfiles, profiles)
	if err != nil {
		return err
	}

	j := newJSONWriter(w)
	j.raw("{\n  \"@context\": ")
	j.str(ROCrateContext)
	j.raw(",\n  \"@graph\": [")

	// The descriptor.
	j.indent(2)
	j.raw("{")
	writeProps(j, 3, []prop{
		{"@id", MetadataFile},
		{"@type", "CreativeWork"},
		{"about", ref("./")},
		{"conformsTo", ref(ROCrateSpec)},
	})
	j.indent(2)
	j.raw("}")

	// The root data entity.
	root := rootProps(d, ctx)
	j.raw(",")
	j.indent(2)
	j.raw("{")
	writeProps(j, 3, root)
	j.raw(",")
	writeChildren(j, 3, "", dirs, sorted)
	j.indent(2)
	j.raw("}")

	// Directories, then files, each in path order.
	for _, dir := range dirs {
		di := dirInfo[dir]
		name := di.Name
		if name == "" {
			name = dir
		}
		ps := []prop{{"@id", PathID(dir) + "/"}, {"@type", "Dataset"}, {"name", name}}
		if di.Description != "" {
			ps = append(ps, prop{"description", di.Description})
		}
		j.raw(",")
		j.indent(2)
		j.raw("{")
		writeProps(j, 3, ps)
		j.raw(",")
		writeChildren(j, 3, dir+"/", dirs, sorted)
		j.indent(2)
		j.raw("}")
	}
	for _, f := range sorted {
		writeFile(j, f)
	}
	for _, e := range ctx {
		j.raw(",")
		j.indent(2)
		j.raw("{")
		writeProps(j, 3, append([]prop{{"@id", e.id}, {"@type", e.typ}}, e.props...))
		j.indent(2)
		j.raw("}")
	}
	j.indent(1)
	j.raw("]\n}\n")
	if err := j.flush(); err != nil {
		return fmt.Errorf("ro-crate: writing metadata: %w", err)
	}
	return nil
}

// writeFile writes one File entity directly, without building a property
// list: this runs once per record file, and allocation there is what
// decides the memory of a 100,000-record crate.
func writeFile(j *jsonWriter, f File) {
	key := func(k string) {
		j.raw(",")
		j.indent(3)
		j.str(k)
		j.raw(": ")
	}
	j.raw(",")
	j.indent(2)
	j.raw("{")
	j.indent(3)
	j.raw(`"@id": `)
	j.str(PathID(f.Path))
	key("@type")
	j.str("File")
	key("name")
	if f.Name != "" {
		j.str(f.Name)
	} else {
		j.str(path.Base(f.Path))
	}
	if f.Description != "" {
		key("description")
		j.str(f.Description)
	}
	if f.EncodingFormat != "" {
		key("encodingFormat")
		j.str(f.EncodingFormat)
	}
	if len(f.ConformsTo) > 0 {
		key("conformsTo")
		j.raw("[")
		for k, u := range f.ConformsTo {
			if k > 0 {
				j.raw(",")
			}
			j.indent(4)
			j.raw(`{"@id": `)
			j.str(u)
			j.raw("}")
		}
		j.indent(3)
		j.raw("]")
	}
	// schema.org contentSize is Text; RO-Crate's examples write it as a
	// string.
	key("contentSize")
	j.raw(`"`)
	j.int(f.ContentSize)
	j.raw(`"`)
	if f.SHA256 != "" {
		key("sha256")
		j.str(f.SHA256)
	}
	j.indent(2)
	j.raw("}")
}

// writeChildren writes the hasPart of the directory prefix ("" for the
// root, else "dir/"): its direct subdirectories and files, merged in path
// order, streamed from the sorted lists.
func writeChildren(j *jsonWriter, level int, prefix string, dirs []string, files []File) {
	di, _ := slices.BinarySearch(dirs, prefix)
	fi, _ := slices.BinarySearchFunc(files, prefix, func(f File, p string) int { return strings.Compare(f.Path, p) })
	next := func(list func(int) (string, bool), i *int) (string, bool) {
		for {
			p, ok := list(*i)
			if !ok || !strings.HasPrefix(p, prefix) {
				return "", false
			}
			if !strings.Contains(p[len(prefix):], "/") {
				return p, true
			}
			*i++
		}
	}
	dirAt := func(i int) (string, bool) {
		if i < len(dirs) {
			return dirs[i], true
		}
		return "", false
	}
	fileAt := func(i int) (string, bool) {
		if i < len(files) {
			return files[i].Path, true
		}
		return "", false
	}
	j.indent(level)
	j.raw(`"hasPart": [`)
	first := true
	emit := func(id string) {
		if !first {
			j.raw(",")
		}
		first = false
		j.indent(level + 1)
		j.raw(`{"@id": `)
		j.str(id)
		j.raw("}")
	}
	for {
		d, dok := next(dirAt, &di)
		f, fok := next(fileAt, &fi)
		if !dok && !fok {
			break
		}
		if dok && (!fok || d < f) {
			emit(PathID(d) + "/")
			di++
		} else {
			emit(PathID(f))
			fi++
		}
	}
	if !first {
		j.indent(level)
	}
	j.raw("]")
}

func writeProps(j *jsonWriter, level int, ps []prop) {
	for i, p := range ps {
		if i > 0 {
			j.raw(",")
		}
		j.indent(level)
		j.str(p.key)
		j.raw(": ")
		switch v := p.val.(type) {
		case string:
			j.str(v)
		case ref:
			j.raw(`{"@id": `)
			j.str(string(v))
			j.raw("}")
		case []ref:
			j.raw("[")
			for k, r := range v {
				if k > 0 {
					j.raw(",")
				}
				j.indent(level + 1)
				j.raw(`{"@id": `)
				j.str(string(r))
				j.raw("}")
			}
			j.indent(level)
			j.raw("]")
		case []string:
			j.raw("[")
			for k, s := range v {
				if k > 0 {
					j.raw(",")
				}
				j.indent(level + 1)
				j.str(s)
			}
			j.indent(level)
			j.raw("]")
		default:
			panic(fmt.Sprintf("crate: unexpected property value %T", v))
		}
	}
}

func checkAbsURI(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || !utf8.ValidString(s) || strings.ContainsAny(s, " \t\r\n\"<>") {
		return fmt.Errorf("%q is not an absolute URI", s)
	}
	return nil
}

func checkDataset(d Dataset) error {
	switch {
	case strings.TrimSpace(d.Name) == "":
		return fmt.Errorf("ro-crate: the dataset needs a name")
	case strings.TrimSpace(d.Description) == "":
		return fmt.Errorf("ro-crate: the dataset needs a description")
	case d.DatePublished.IsZero():
		return fmt.Errorf("ro-crate: the dataset needs datePublished")
	case d.License.URI == "":
		return fmt.Errorf("ro-crate: the dataset needs a licence URI")
	}
	if err := checkAbsURI(d.License.URI); err != nil {
		return fmt.Errorf("ro-crate: licence: %w", err)
	}
	for _, u := range []struct{ what, v string }{
		{"citeAs", d.CiteAs}, {"identifier", d.Identifier}, {"url", d.URL}, {"previous version", d.PreviousVersion},
	} {
		if u.v != "" {
			if err := checkAbsURI(u.v); err != nil {
				return fmt.Errorf("ro-crate: %s: %w", u.what, err)
			}
		}
	}
	for _, c := range d.ConformsTo {
		if err := checkAbsURI(c); err != nil {
			return fmt.Errorf("ro-crate: conformsTo: %w", err)
		}
	}
	for i, a := range d.Authors {
		if strings.TrimSpace(a.Name) == "" {
			return fmt.Errorf("ro-crate: author %d has no name", i+1)
		}
	}
	return nil
}

// rootProps lists the root data entity's properties except hasPart.
func rootProps(d Dataset, ctx []entity) []prop {
	ps := []prop{
		{"@id", "./"},
		{"@type", "Dataset"},
		{"name", d.Name},
		{"description", d.Description},
		// ISO 8601, UTC, to the second: RO-Crate asks for at least a day.
		{"datePublished", d.DatePublished.UTC().Format(time.RFC3339)},
		{"license", ref(d.License.URI)},
	}
	if d.Version != "" {
		ps = append(ps, prop{"version", d.Version})
	}
	if d.Identifier != "" {
		ps = append(ps, prop{"identifier", ref(d.Identifier)})
	}
	if d.CiteAs != "" {
		ps = append(ps, prop{"cite-as", d.CiteAs})
	}
	if d.URL != "" {
		ps = append(ps, prop{"url", d.URL})
	}
	var authors []ref
	for _, e := range ctx {
		if e.typ == "Person" {
			authors = append(authors, ref(e.id))
		}
	}
	if len(authors) > 0 {
		ps = append(ps, prop{"author", authors})
	}
	if d.Publisher != nil {
		ps = append(ps, prop{"publisher", ref(orgID(*d.Publisher))})
	}
	if len(d.Keywords) > 0 {
		ps = append(ps, prop{"keywords", slices.Clone(d.Keywords)})
	}
	if d.PreviousVersion != "" {
		ps = append(ps, prop{"isBasedOn", ref(d.PreviousVersion)})
	}
	if len(d.ConformsTo) > 0 {
		refs := make([]ref, len(d.ConformsTo))
		for i, c := range d.ConformsTo {
			refs[i] = ref(c)
		}
		ps = append(ps, prop{"conformsTo", refs})
	}
	if d.Temporal != "" {
		ps = append(ps, prop{"temporalCoverage", d.Temporal})
	}
	if d.Spatial != nil {
		ps = append(ps, prop{"spatialCoverage", ref("#spatial-coverage")})
	}
	return ps
}

func orgID(o Organization) string {
	if o.ID != "" {
		return o.ID
	}
	return "#organization-" + slug(o.Name)
}

// slug makes a local @id fragment from a name: letters and digits kept
// (any script), runs of anything else become one "-".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') || r >= utf8.RuneSelf && isUCSChar(r) && !strings.ContainsRune("\u00a0\u2000\u2001\u2002\u2003\u3000", r) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// contextual builds the contextual entities, in a fixed order: licence,
// identifier, authors, organisations, profiles (by URI), previous version,
// place. Entities sharing an @id must agree.
func contextual(d Dataset, usedProfiles map[string]bool, profileNames map[string]string) ([]entity, error) {
	var out []entity
	seen := map[string]int{}
	add := func(e entity) error {
		if i, ok := seen[e.id]; ok {
			if fmt.Sprint(out[i]) != fmt.Sprint(e) {
				return fmt.Errorf("ro-crate: two different entities with @id %q", e.id)
			}
			return nil
		}
		seen[e.id] = len(out)
		out = append(out, e)
		return nil
	}
	lic := d.License
	name := cmp.Or(lic.Name, lic.SPDX, lic.URI)
	le := entity{id: lic.URI, typ: "CreativeWork", props: []prop{{"name", name}}}
	if desc := cmp.Or(lic.Description, name); desc != "" {
		le.props = append(le.props, prop{"description", desc})
	}
	if lic.SPDX != "" {
		le.props = append(le.props, prop{"identifier", lic.SPDX})
	}
	if err := add(le); err != nil {
		return nil, err
	}
	if d.Identifier != "" {
		pv := entity{id: d.Identifier, typ: "PropertyValue"}
		if m := doiRe.FindStringSubmatch(d.Identifier); m != nil {
			pv.props = []prop{{"propertyID", "https://registry.identifiers.org/registry/doi"}, {"value", "doi:" + m[1]}, {"url", d.Identifier}}
		} else {
			pv.props = []prop{{"value", d.Identifier}, {"url", d.Identifier}}
		}
		if err := add(pv); err != nil {
			return nil, err
		}
	}
	var orgs []Organization
	for i, a := range d.Authors {
		id := fmt.Sprintf("#author-%d", i+1)
		if a.ORCID != "" {
			u, err := ORCIDURI(a.ORCID)
			if err != nil {
				return nil, fmt.Errorf("ro-crate: author %q: %w", a.Name, err)
			}
			id = u
		}
		if _, dup := seen[id]; dup {
			return nil, fmt.Errorf("ro-crate: author %q listed twice (%s)", a.Name, id)
		}
		pe := entity{id: id, typ: "Person", props: []prop{{"name", a.Name}}}
		if a.GivenName != "" {
			pe.props = append(pe.props, prop{"givenName", a.GivenName})
		}
		if a.FamilyName != "" {
			pe.props = append(pe.props, prop{"familyName", a.FamilyName})
		}
		if a.Email != "" {
			pe.props = append(pe.props, prop{"email", a.Email})
		}
		if a.Affiliation != nil {
			pe.props = append(pe.props, prop{"affiliation", ref(orgID(*a.Affiliation))})
			orgs = append(orgs, *a.Affiliation)
		}
		if err := add(pe); err != nil {
			return nil, err
		}
	}
	if d.Publisher != nil {
		orgs = append(orgs, *d.Publisher)
	}
	for _, o := range orgs {
		if strings.TrimSpace(o.Name) == "" {
			return nil, fmt.Errorf("ro-crate: an organisation has no name")
		}
		if o.ID != "" {
			if err := checkAbsURI(o.ID); err != nil {
				return nil, fmt.Errorf("ro-crate: organisation %q: %w", o.Name, err)
			}
		} else if slug(o.Name) == "" {
			return nil, fmt.Errorf("ro-crate: organisation %q: give it an ID (its name makes no local id)", o.Name)
		}
		oe := entity{id: orgID(o), typ: "Organization", props: []prop{{"name", o.Name}}}
		if o.URL != "" {
			oe.props = append(oe.props, prop{"url", o.URL})
		}
		if err := add(oe); err != nil {
			return nil, err
		}
	}
	var uris []string
	for u := range usedProfiles {
		uris = append(uris, u)
	}
	for _, u := range d.ConformsTo {
		if !usedProfiles[u] {
			uris = append(uris, u)
		}
	}
	slices.Sort(uris)
	for _, u := range uris {
		n := cmp.Or(profileNames[u], knownProfiles[u], u)
		if err := add(entity{id: u, typ: "Profile", props: []prop{{"name", n}}}); err != nil {
			return nil, err
		}
	}
	if d.PreviousVersion != "" {
		if err := add(entity{id: d.PreviousVersion, typ: "CreativeWork", props: []prop{{"name", "Previous version of " + d.Name}}}); err != nil {
			return nil, err
		}
	}
	if p := d.Spatial; p != nil {
		pe := entity{id: "#spatial-coverage", typ: "Place", props: []prop{{"name", p.Name}}}
		if p.South != 0 || p.West != 0 || p.North != 0 || p.East != 0 {
			if p.South > p.North || p.South < -90 || p.North > 90 || p.West < -180 || p.East > 180 {
				return nil, fmt.Errorf("ro-crate: spatial coverage box out of range")
			}
			pe.props = append(pe.props, prop{"geo", ref("#spatial-coverage-box")})
			if err := add(pe); err != nil {
				return nil, err
			}
			// schema.org box: "lat lon lat lon", lower corner first.
			box := fmt.Sprintf("%s %s %s %s", fnum(p.South), fnum(p.West), fnum(p.North), fnum(p.East))
			if err := add(entity{id: "#spatial-coverage-box", typ: "GeoShape", props: []prop{{"box", box}}}); err != nil {
				return nil, err
			}
		} else if err := add(pe); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func fnum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
