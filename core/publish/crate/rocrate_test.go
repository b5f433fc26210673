package crate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/publish/publishtest"
)

func readGraph(t *testing.T, b []byte) (map[string]any, map[string]map[string]any) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("metadata is not JSON: %v", err)
	}
	ents := map[string]map[string]any{}
	for _, e := range doc["@graph"].([]any) {
		m := e.(map[string]any)
		id := m["@id"].(string)
		if _, dup := ents[id]; dup {
			t.Errorf("duplicate @id %q", id)
		}
		ents[id] = m
	}
	return doc, ents
}

func TestCrateFollowsROCrate12(t *testing.T) {
	dir := t.TempDir()
	ds := testDataset()
	_, files := writeCrate(t, dir, ds)
	if err := CheckCrate(os.DirFS(dir)); err != nil {
		t.Fatalf("CheckCrate: %v", err)
	}
	b, err := os.ReadFile(dir + "/" + MetadataFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, ents := readGraph(t, b)
	if doc["@context"] != ROCrateContext {
		t.Errorf("@context %v", doc["@context"])
	}
	if len(doc) != 2 {
		t.Errorf("top level has %d keys, want @context and @graph only", len(doc))
	}
	ref := func(id string) map[string]any { return map[string]any{"@id": id} }
	desc := ents[MetadataFile]
	wantDesc := map[string]any{"@id": MetadataFile, "@type": "CreativeWork", "about": ref("./"), "conformsTo": ref("https://w3id.org/ro/crate/1.2")}
	if fmt.Sprint(desc) != fmt.Sprint(wantDesc) {
		t.Errorf("descriptor %v, want %v", desc, wantDesc)
	}
	root := ents["./"]
	checks := []struct {
		key  string
		want any
	}{
		{"@type", "Dataset"},
		{"name", ds.Name},
		{"description", ds.Description},
		{"datePublished", "2026-03-14T14:09:26Z"},
		{"license", ref(ds.License.URI)},
		{"version", "3"},
		{"cite-as", ds.CiteAs},
		{"identifier", ref(ds.Identifier)},
		{"url", ds.URL},
		{"isBasedOn", ref(ds.PreviousVersion)},
		{"publisher", ref("#organization-strata-demo-instance")},
		{"author", []any{ref("https://orcid.org/0000-0002-1825-0097"), ref("#author-2"), ref("https://orcid.org/0000-0001-5109-3700")}},
		{"keywords", []any{"archaeology", "stratigraphy", "Harris matrix"}},
		{"temporalCoverage", "-2500/-1200"},
		{"spatialCoverage", ref("#spatial-coverage")},
	}
	for _, c := range checks {
		if fmt.Sprint(root[c.key]) != fmt.Sprint(c.want) {
			t.Errorf("root %s = %v, want %v", c.key, root[c.key], c.want)
		}
	}
	if _, err := time.Parse(time.RFC3339, root["datePublished"].(string)); err != nil {
		t.Errorf("datePublished: %v", err)
	}
	// Contextual entities the root points at, with what RO-Crate asks.
	lic := ents[ds.License.URI]
	if lic["@type"] != "CreativeWork" || lic["name"] == nil || lic["description"] == nil {
		t.Errorf("licence entity %v: want CreativeWork with name and description", lic)
	}
	if pv := ents[ds.Identifier]; pv["@type"] != "PropertyValue" || pv["value"] != "doi:10.5555/strata.tell-example.3" || pv["propertyID"] != "https://registry.identifiers.org/registry/doi" {
		t.Errorf("identifier entity %v", pv)
	}
	if o := ents["https://ror.org/05gq02987"]; o["@type"] != "Organization" || o["name"] != "Brown University" {
		t.Errorf("affiliation %v", o)
	}
	if box := ents["#spatial-coverage-box"]; box["box"] != "36.1 38.2 36.2 38.35" {
		t.Errorf("box %v", box)
	}
	// Every file: a File entity whose @id decodes to its path, reached
	// from the root through hasPart; directories as Datasets ending in /.
	parent := map[string]string{}
	for id, e := range ents {
		for _, p := range asList(e["hasPart"]) {
			child := p.(map[string]any)["@id"].(string)
			if prev, dup := parent[child]; dup {
				t.Errorf("%q is part of both %q and %q", child, prev, id)
			}
			parent[child] = id
		}
	}
	for _, f := range files {
		id := PathID(f.Path)
		e := ents[id]
		if e == nil {
			t.Errorf("file %q (@id %q) not described", f.Path, id)
			continue
		}
		if e["@type"] != "File" || e["contentSize"] != fmt.Sprint(f.ContentSize) || e["sha256"] != f.SHA256 {
			t.Errorf("file %q: %v", f.Path, e)
		}
		u, err := url.Parse(id)
		if err != nil || u.Scheme != "" || u.Fragment != "" || u.RawQuery != "" || u.Path != f.Path {
			t.Errorf("@id %q of %q does not parse back to the path (%v)", id, f.Path, err)
		}
		// Walk up to the root.
		for cur, n := id, 0; cur != "./"; n++ {
			p, ok := parent[cur]
			if !ok || n > 10 {
				t.Errorf("%q is not reachable from the root", id)
				break
			}
			if want := dirID(cur); p != want {
				t.Errorf("%q is part of %q, want its directory %q", cur, p, want)
			}
			cur = p
		}
	}
	for _, id := range []string{"records/", "records/sub/", "records/sub/dir/", "tables/"} {
		if e := ents[id]; e == nil || e["@type"] != "Dataset" || e["name"] == nil {
			t.Errorf("directory %q: %v", id, e)
		}
	}
	if ents["records/"]["description"] != "One Linked Art JSON-LD document per record." {
		t.Errorf("directory description lost: %v", ents["records/"])
	}
	for uri, name := range map[string]string{ProfileLinkedArt: "Linked Art", ProfileFrictionlessTable: "Frictionless Table Schema"} {
		if p := ents[uri]; p["@type"] != "Profile" || p["name"] != name {
			t.Errorf("profile %q: %v", uri, p)
		}
	}
}

// dirID is the @id of the directory holding the entity id ("./" at top).
func dirID(id string) string {
	s := strings.TrimSuffix(id, "/")
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return "./"
	}
	return s[:i+1]
}

func TestPathID(t *testing.T) {
	tests := []struct{ path, want string }{
		{"tables/finds.csv", "tables/finds.csv"},
		{"Results and Diagrams/almost-50%.png", "Results%20and%20Diagrams/almost-50%25.png"}, // the spec's own example
		{"面试.mp4", "面试.mp4"},
		{"été #1.json", "été%20%231.json"},
		{"a:b.txt", "a%3Ab.txt"},
		{"q?x=1", "q%3Fx=1"},
		{"brackets [1] {2} <3> |\"^`", "brackets%20%5B1%5D%20%7B2%7D%20%3C3%3E%20%7C%22%5E%60"},
		{"sub-delims !$&'()*+,;=@~", "sub-delims%20!$&'()*+,;=@~"},
		{"c1 \u0085 and nbsp \u00a0", "c1%20%C2%85%20and%20nbsp%20\u00a0"},
		{"private \ue000 nonchar \ufffe", "private%20%EE%80%80%20nonchar%20%EF%BF%BE"},
		{"astral 𓀀", "astral%20𓀀"},
	}
	for _, tc := range tests {
		got := PathID(tc.path)
		if got != tc.want {
			t.Errorf("PathID(%q) = %q, want %q", tc.path, got, tc.want)
		}
		u, err := url.Parse(got)
		if err != nil || u.Scheme != "" || u.Path != tc.path {
			t.Errorf("%q parses to %+v (%v), want path %q", got, u, err, tc.path)
		}
	}
}

// TestExpandJSONLD expands the metadata with a JSON-LD 1.1 processor,
// against the context held in testdata, and checks that every property
// maps to an IRI (none dropped) and that relative @ids resolve, against a
// base, to the files' paths.
func TestExpandJSONLD(t *testing.T) {
	dir := t.TempDir()
	writeCrate(t, dir, testDataset())
	b, err := os.ReadFile(dir + "/" + MetadataFile)
	if err != nil {
		t.Fatal(err)
	}
	_, ents := readGraph(t, b)
	// Safe mode: the processor fails on anything it would drop.
	const base = publishtest.ExpandBase
	expanded, err := publishtest.ExpandJSONLD(b)
	if err != nil {
		t.Fatalf("expand: %v", err)
	}
	nodes := map[string]map[string]any{}
	var graph []any
	if len(expanded) == 1 {
		if g, ok := expanded[0].(map[string]any)["@graph"].([]any); ok {
			graph = g
		}
	}
	if graph == nil {
		graph = expanded
	}
	for _, n := range graph {
		m := n.(map[string]any)
		nodes[norm(t, base, m["@id"].(string))] = m
	}
	if len(nodes) != len(ents) {
		t.Errorf("expanded %d nodes, compact graph has %d", len(nodes), len(ents))
	}
	for id, e := range ents {
		abs := norm(t, base, id)
		n := nodes[abs]
		if n == nil {
			t.Errorf("%q (as %q) missing after expansion", id, abs)
			continue
		}
		if len(n) != len(e) {
			t.Errorf("%q: %d keys compact, %d expanded: %v", id, len(e), len(n), n)
		}
	}
	const s = "http://schema.org/"
	root := nodes[norm(t, base, "./")]
	for _, iri := range []string{s + "name", s + "description", s + "datePublished", s + "license", s + "version", s + "author",
		s + "hasPart", s + "identifier", s + "isBasedOn", s + "publisher", s + "keywords", s + "url", s + "temporalCoverage",
		s + "spatialCoverage", "http://www.iana.org/assignments/relation/cite-as"} {
		if root[iri] == nil {
			t.Errorf("root has no %s after expansion", iri)
		}
	}
	if fmt.Sprint(root["@type"]) != "["+s+"Dataset]" {
		t.Errorf("root @type %v", root["@type"])
	}
	descNode := nodes[norm(t, base, MetadataFile)]
	if fmt.Sprint(descNode["http://purl.org/dc/terms/conformsTo"]) != "[map[@id:https://w3id.org/ro/crate/1.2]]" ||
		fmt.Sprint(descNode[s+"about"]) != "[map[@id:"+base+"]]" {
		t.Errorf("descriptor expanded to %v", descNode)
	}
	// Files: schema:MediaObject at the base-resolved path.
	f := nodes[base+"records/données été #1.json#"]
	if f == nil || fmt.Sprint(f["@type"]) != "["+s+"MediaObject]" || f[s+"sha256"] == nil || f[s+"contentSize"] == nil || f["http://purl.org/dc/terms/conformsTo"] == nil {
		t.Errorf("file node %v", f)
	}
}

// norm resolves id against base and returns it with its path decoded, so
// that two spellings of one IRI (native UTF-8 or percent-encoded) compare
// equal and a path compares with the file's.
func norm(t *testing.T, base, id string) string {
	t.Helper()
	b, _ := url.Parse(base)
	r, err := url.Parse(id)
	if err != nil {
		t.Fatalf("@id %q: %v", id, err)
	}
	u := b.ResolveReference(r)
	return u.Scheme + "://" + u.Host + u.Path + "#" + u.Fragment
}

func TestMetadataErrors(t *testing.T) {
	good := File{Path: "a.csv", ContentSize: 1}
	tests := []struct {
		name  string
		edit  func(*Dataset)
		files []File
		want  string
	}{
		{"no name", func(d *Dataset) { d.Name = " " }, nil, "needs a name"},
		{"no description", func(d *Dataset) { d.Description = "" }, nil, "needs a description"},
		{"no date", func(d *Dataset) { d.DatePublished = time.Time{} }, nil, "datePublished"},
		{"no licence", func(d *Dataset) { d.License.URI = "" }, nil, "licence"},
		{"relative licence", func(d *Dataset) { d.License.URI = "cc-by" }, nil, "not an absolute URI"},
		{"bad ORCID check digit", func(d *Dataset) { d.Authors[0].ORCID = "0000-0002-1825-0098" }, nil, "check digit"},
		{"bad ORCID form", func(d *Dataset) { d.Authors[0].ORCID = "orcid:123" }, nil, "ORCID"},
		{"same author twice", func(d *Dataset) { d.Authors[2].ORCID = d.Authors[0].ORCID }, nil, "twice"},
		{"one org id, two names", func(d *Dataset) {
			d.Authors[2].Affiliation = &Organization{ID: "https://ror.org/05gq02987", Name: "Other"}
		}, nil, "two different entities"},
		{"unnamed author", func(d *Dataset) { d.Authors[1].Name = "" }, nil, "no name"},
		{"duplicate path", nil, []File{good, good}, "twice"},
		{"file and directory", nil, []File{{Path: "a"}, {Path: "a/b"}}, "both a file and a directory"},
		{"dot dot", nil, []File{{Path: "../etc/passwd"}}, ". or .."},
		{"absolute", nil, []File{{Path: "/etc/passwd"}}, "empty"},
		{"trailing slash", nil, []File{{Path: "dir/"}}, "empty"},
		{"backslash", nil, []File{{Path: `a\b`}}, "backslash"},
		{"newline", nil, []File{{Path: "a\nb"}}, "control"},
		{"invalid UTF-8", nil, []File{{Path: "a\xffb"}}, "UTF-8"},
		{"metadata file", nil, []File{{Path: MetadataFile}}, "reserved"},
		{"bad sha", nil, []File{{Path: "a", SHA256: "ABC"}}, "sha256"},
		{"negative size", nil, []File{{Path: "a", ContentSize: -1}}, "negative"},
		{"relative profile", nil, []File{{Path: "a", ConformsTo: []string{"linked-art"}}}, "absolute"},
		{"described empty dir", func(d *Dataset) { d.Directories = []Directory{{Path: "nothing"}} }, []File{good}, "holds no file"},
		{"invalid UTF-8 name", func(d *Dataset) { d.Description = "bad \xc3" }, []File{good}, "UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := testDataset()
			d.Directories = nil
			if tc.edit != nil {
				tc.edit(&d)
			}
			err := WriteMetadata(io.Discard, d, tc.files)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestMetadataDeterministic: the same inputs in any order give the same
// bytes, and a new date and version change only those lines.
func TestMetadataDeterministic(t *testing.T) {
	files := manyFiles(500)
	ds := testDataset()
	ds.Directories = nil
	var a, b bytes.Buffer
	if err := WriteMetadata(&a, ds, files); err != nil {
		t.Fatal(err)
	}
	shuffled := slices.Clone(files)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if err := WriteMetadata(&b, ds, shuffled); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("file order changed the output")
	}
	if !reflect.DeepEqual(files, manyFiles(500)) {
		t.Fatal("WriteMetadata modified its input")
	}
	ds2 := ds
	ds2.DatePublished = ds.DatePublished.Add(48 * time.Hour)
	ds2.Version = "4"
	var c bytes.Buffer
	if err := WriteMetadata(&c, ds2, files); err != nil {
		t.Fatal(err)
	}
	la, lc := strings.Split(a.String(), "\n"), strings.Split(c.String(), "\n")
	if len(la) != len(lc) {
		t.Fatalf("%d lines, then %d", len(la), len(lc))
	}
	var diff []string
	for i := range la {
		if la[i] != lc[i] {
			diff = append(diff, strings.TrimSpace(lc[i]))
		}
	}
	want := []string{`"datePublished": "2026-03-16T14:09:26Z",`, `"version": "4",`}
	if !slices.Equal(diff, want) {
		t.Errorf("changed lines %q, want %q", diff, want)
	}
}

func manyFiles(n int) []File {
	files := make([]File, 0, n+2)
	for i := range n {
		files = append(files, File{
			Path: fmt.Sprintf("records/%s/%06d.jsonld", []string{"units", "finds", "samples"}[i%3], i), EncodingFormat: "application/ld+json",
			ConformsTo: []string{ProfileLinkedArt}, ContentSize: int64(1000 + i), SHA256: fmt.Sprintf("%064x", i),
		})
	}
	files = append(files, File{Path: "datapackage.json", ConformsTo: []string{ProfileFrictionlessPackage}}, File{Path: "datacite.xml"})
	return files
}

// TestMetadataManyFiles writes 100,000 record files' metadata and checks
// the result is whole, and that writing allocates a bounded amount per file
// (the document is streamed, not built): memory, not time, is measured.
func TestMetadataManyFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("100k files")
	}
	const n = 100_000
	files := manyFiles(n)
	ds := testDataset()
	ds.Directories = nil
	var out countingDiscard
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := WriteMetadata(&out, ds, files); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	// The sorted copy of the slice is ~110 bytes a file and little else is
	// allocated per file (~330 bytes in all when this was written). A
	// document built in memory would hold the whole output (~410 bytes a
	// file) on top of a map per entity, several kilobytes a file.
	perFile := alloc / n
	t.Logf("output %d bytes, allocated %d bytes (%d per file)", out.n, alloc, perFile)
	if perFile > 800 {
		t.Errorf("allocated %d bytes per file; expected a streaming writer to stay under 800", perFile)
	}
	if uint64(out.n) < alloc {
		t.Errorf("allocated %d bytes for %d bytes of output", alloc, out.n)
	}
	// And it is well-formed, with every file.
	var buf bytes.Buffer
	if err := WriteMetadata(&buf, ds, files); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Graph []map[string]any `json:"@graph"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	nFiles := 0
	for _, e := range doc.Graph {
		if e["@type"] == "File" {
			nFiles++
		}
	}
	if nFiles != n+2 {
		t.Errorf("%d File entities, want %d", nFiles, n+2)
	}
}

type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func BenchmarkWriteMetadata100k(b *testing.B) {
	files := manyFiles(100_000)
	ds := testDataset()
	ds.Directories = nil
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteMetadata(io.Discard, ds, files); err != nil {
			b.Fatal(err)
		}
	}
}
