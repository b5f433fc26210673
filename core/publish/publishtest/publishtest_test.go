package publishtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func readRoot(t *testing.T, rel string) []byte {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// skipNoXMLLint skips when xmllint is absent and not required.
func skipNoXMLLint(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, ErrNoXMLLint) {
		t.Skip(err)
	}
}

func TestRoot(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "core", "publish", "publishtest", "doc.go")); err != nil {
		t.Errorf("root %s does not hold this package: %v", root, err)
	}
}

func TestLinkedArt(t *testing.T) {
	for _, name := range []string{"unit", "find"} {
		good := readRoot(t, "core/publish/linkedart/testdata/golden/"+name+".jsonld")
		if err := LinkedArt(good); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		c, err := LinkedArtExpansion(good)
		if err != nil {
			t.Errorf("%s expansion: %v", name, err)
		}
		if c.IDs["http://www.cidoc-crm.org/cidoc-crm/E22_Human-Made_Object"] == 0 {
			t.Errorf("%s: no E22 after expansion", name)
		}
		var m map[string]any
		json.Unmarshal(good, &m)
		delete(m, "_label")
		bad, _ := json.Marshal(m)
		if LinkedArt(bad) == nil {
			t.Errorf("%s without _label accepted", name)
		}
		m["_label"] = "x"
		m["made_of_typo"] = []any{}
		bad, _ = json.Marshal(m)
		if _, err := LinkedArtExpansion(bad); err == nil || !strings.Contains(err.Error(), "dropped") {
			t.Errorf("%s: an undefined term went unnoticed: %v", name, err)
		}
	}
	if LinkedArt([]byte("{")) == nil || LinkedArt([]byte(`"\u0000"`)) == nil {
		t.Error("not a record, accepted")
	}
	place := `{"@context":"` + LinkedArtContext + `","id":"https://x.org/p/1","type":"Place","_label":"Trench 1 ünï 🏺 </script>"}`
	if err := LinkedArt([]byte(place)); err != nil {
		t.Errorf("place: %v", err)
	}
	if err := LinkedArt([]byte(strings.Replace(place, `"type":"Place"`, `"type":"Place","made_of":[]`, 1))); err == nil {
		t.Error("a place made of something accepted by place.json")
	}
}

func TestISODateTime(t *testing.T) {
	for _, good := range []string{"-0500-01-01T00:00:00Z", "0000-12-31T23:59:59Z", "-12000-01-01T00:00:00Z", "2024-02-29T10:00:00.5+01:00"} {
		if err := ISODateTime(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range []string{"-500-01-01T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01", "-0000-01-01T00:00:00Z", "02024-01-01T00:00:00Z", "yesterday", "2024-02-30T00:00:00Z"} {
		if ISODateTime(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

const crateMeta = `{"@context": "https://w3id.org/ro/crate/1.2/context", "@graph": [
 {"@id": "ro-crate-metadata.json", "@type": "CreativeWork", "about": {"@id": "./"}, "conformsTo": {"@id": "https://w3id.org/ro/crate/1.2"}},
 {"@id": "./", "@type": "Dataset", "name": "Tell é", "description": "d", "datePublished": "2026-03-14T14:09:26Z",
  "license": {"@id": "https://creativecommons.org/licenses/by/4.0/"}, "hasPart": [{"@id": "a.csv"}]},
 {"@id": "a.csv", "@type": "File"},
 {"@id": "https://creativecommons.org/licenses/by/4.0/", "@type": "CreativeWork", "name": "CC BY 4.0"}]}`

func TestROCrate(t *testing.T) {
	root, err := ROCrate([]byte(crateMeta))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(root["http://schema.org/hasPart"]) != "[map[@id:"+ExpandBase+"a.csv]]" {
		t.Errorf("root %v", root)
	}
	for name, edit := range map[string][2]string{
		"1.1 context":       {`crate/1.2/context"`, `crate/1.1/context"`},
		"extra top level":   {`"@graph"`, `"name": "x", "@graph"`},
		"descriptor type":   {`"@type": "CreativeWork", "about"`, `"@type": "Dataset", "about"`},
		"descriptor about":  {`"about": {"@id": "./"}`, `"about": {"@id": "a.csv"}`},
		"conformsTo":        {`"conformsTo": {"@id": "https://w3id.org/ro/crate/1.2"}`, `"conformsTo": {"@id": "https://w3id.org/ro/crate/1.1"}`},
		"root not Dataset":  {`"@type": "Dataset", "name"`, `"@type": "CreativeWork", "name"`},
		"no name":           {`"name": "Tell é", `, ``},
		"blank description": {`"description": "d"`, `"description": " "`},
		"date":              {`"2026-03-14T14:09:26Z"`, `"14 March 2026"`},
		"two dates":         {`"2026-03-14T14:09:26Z"`, `["2026-03-14", "2026-03-15"]`},
		"no license":        {`"license": {"@id": "https://creativecommons.org/licenses/by/4.0/"}, `, ``},
		"undefined term":    {`"name": "Tell é"`, `"name": "Tell é", "nme": "x"`},
		"remote context":    {`"https://w3id.org/ro/crate/1.2/context"`, `["https://w3id.org/ro/crate/1.2/context", "https://example.org/ctx"]`},
		"no root":           {`"@id": "./"`, `"@id": "root/"`},
		"not JSON":          {`{"@context"`, `["@context"`},
	} {
		bad := strings.Replace(crateMeta, edit[0], edit[1], 1)
		if bad == crateMeta {
			t.Fatalf("%s: %q not found", name, edit[0])
		}
		if _, err := ROCrate([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestExpandJSONLDOffline(t *testing.T) {
	for _, u := range []string{"https://example.org/context.jsonld", "http://w3id.org/ro/crate/1.2/context", "file:///etc/passwd"} {
		_, err := ExpandJSONLD([]byte(`{"@context": "` + u + `", "name": "x"}`))
		if err == nil || !strings.Contains(err.Error(), "offline") {
			t.Errorf("%s: %v", u, err)
		}
	}
	out, err := ExpandJSONLD([]byte(`{"@context": "` + LinkedArtContext + `", "id": "https://x.org/1", "type": "HumanMadeObject"}`))
	if err != nil || len(out) != 1 {
		t.Fatalf("%v %v", out, err)
	}
}

func TestDataPackage(t *testing.T) {
	good := `{"name": "p", "resources": [{"name": "t", "path": "t.csv", "schema": {"fields": [{"name": "id", "type": "integer"}]}}]}`
	for _, v := range []string{"1.0", "2.0"} {
		if err := DataPackageProfile([]byte(good), v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	if err := DataPackage([]byte(good)); err != nil {
		t.Error(err)
	}
	for name, bad := range map[string]string{
		"unknown type":  strings.Replace(good, `"integer"`, `"nonsense"`, 1),
		"path escapes":  strings.Replace(good, `"t.csv"`, `"../t.csv"`, 1),
		"absolute path": strings.Replace(good, `"t.csv"`, `"/etc/t.csv"`, 1),
		"no resources":  `{"name": "p", "resources": []}`,
		"not JSON":      `{`,
	} {
		if DataPackage([]byte(bad)) == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if DataPackageProfile([]byte(good), "3.0") == nil {
		t.Error("profile 3.0 accepted")
	}
}

func TestDataCiteXML(t *testing.T) {
	good := readRoot(t, "core/publish/datacite/testdata/full.xml")
	err := DataCiteXML(good)
	skipNoXMLLint(t, err)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(good, []byte("<publisher"), []byte("<publisherX"), 1)
	bad = bytes.Replace(bad, []byte("</publisher>"), []byte("</publisherX>"), 1)
	if DataCiteXML(bad) == nil {
		t.Error("a resource without publisher accepted")
	}
	if DataCiteXML([]byte("<resource")) == nil {
		t.Error("broken XML accepted")
	}
}

const oaiHead = `<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">
<responseDate>2026-03-14T14:09:26Z</responseDate>`

func TestOAIPMH(t *testing.T) {
	dc := readRoot(t, "core/publish/datacite/testdata/full.xml")
	dc = dc[bytes.Index(dc, []byte("<resource")):]
	good := map[string]string{
		"error": oaiHead + `<request>https://x.org/oai</request><error code="badVerb">no verb</error></OAI-PMH>`,
		"oai_dc": oaiHead + `<request verb="GetRecord" identifier="https://x.org/r/1" metadataPrefix="oai_dc">https://x.org/oai</request>
<GetRecord><record><header><identifier>https://x.org/r/1</identifier><datestamp>2026-03-14T14:09:26Z</datestamp><setSpec>table:finds</setSpec></header>
<metadata><oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/" xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd"><dc:title xml:lang="en">F1 &lt;b&gt; ünï</dc:title></oai_dc:dc></metadata></record></GetRecord></OAI-PMH>`,
		"datacite": oaiHead + `<request verb="GetRecord" identifier="https://x.org/r/1" metadataPrefix="datacite">https://x.org/oai</request>
<GetRecord><record><header><identifier>https://x.org/r/1</identifier><datestamp>2026-03-14T14:09:26Z</datestamp></header>
<metadata>` + string(dc) + `</metadata></record></GetRecord></OAI-PMH>`,
		"deleted": oaiHead + `<request verb="GetRecord" identifier="https://x.org/r/1" metadataPrefix="oai_dc">https://x.org/oai</request>
<GetRecord><record><header status="deleted"><identifier>https://x.org/r/1</identifier><datestamp>2026-03-14T14:09:26Z</datestamp></header></record></GetRecord></OAI-PMH>`,
	}
	for name, doc := range good {
		err := OAIPMH([]byte(doc))
		skipNoXMLLint(t, err)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, edit := range map[string][3]string{
		"error code":          {"error", `"badVerb"`, `"badThing"`},
		"unknown dc element":  {"oai_dc", `<dc:title xml:lang="en">F1 &lt;b&gt; ünï</dc:title>`, `<dc:headline>x</dc:headline>`},
		"datacite payload":    {"datacite", `<publisher`, `<publisherX`},
		"unknown payload":     {"oai_dc", `http://www.openarchives.org/OAI/2.0/oai_dc/"`, `urn:nobody"`},
		"bad datestamp":       {"oai_dc", `<datestamp>2026-03-14T14:09:26Z</datestamp>`, `<datestamp>14 March</datestamp>`},
		"metadata on deleted": {"deleted", `</header>`, `</header><metadata/>`},
	} {
		bad := strings.Replace(good[edit[0]], edit[1], edit[2], 1)
		if bad == good[edit[0]] {
			t.Fatalf("%s: %q not found", name, edit[1])
		}
		if OAIPMH([]byte(bad)) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// level0 writes, into a MapFS, a level 0 image service of a w×h image with
// one scale factor (the image fits one tile), as core/publish/iiif would.
func level0(t *testing.T, dir, sid string, w, h int) fstest.MapFS {
	t.Helper()
	jpg := func(w, h int) []byte {
		m := image.NewRGBA(image.Rect(0, 0, w, h))
		for i := range m.Pix {
			m.Pix[i] = 200
		}
		m.Set(0, 0, color.Black)
		var b bytes.Buffer
		if err := jpeg.Encode(&b, m, nil); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	info := fmt.Sprintf(`{"@context":"http://iiif.io/api/image/3/context.json","id":%q,"type":"ImageService3","protocol":"http://iiif.io/api/image","profile":"level0","width":%d,"height":%d,"tiles":[{"width":512,"height":512,"scaleFactors":[1]}]}`, sid, w, h)
	return fstest.MapFS{
		dir + "/info.json":              {Data: []byte(info)},
		dir + "/full/max/0/default.jpg": {Data: jpg(w, h)},
		fmt.Sprintf("%s/0,0,%d,%d/%d,%d/0/default.jpg", dir, w, h, w, h): {Data: jpg(w, h)},
	}
}

func TestIIIF(t *testing.T) {
	const sid = "https://x.org/dig/publish/snapshots/1/iiif/finds-1-1"
	files := level0(t, "iiif/finds-1-1", sid, 40, 30)
	manifest := `{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "https://x.org/m/1", "type": "Manifest",
 "label": {"en": ["Find 1 </script> 🏺"]}, "rights": "http://creativecommons.org/licenses/by/4.0/",
 "items": [{"id": "https://x.org/m/1/canvas/1", "type": "Canvas", "width": 40, "height": 30,
  "items": [{"id": "https://x.org/m/1/page/1", "type": "AnnotationPage", "items": [{"id": "https://x.org/m/1/anno/1", "type": "Annotation",
   "motivation": "painting", "target": "https://x.org/m/1/canvas/1",
   "body": {"id": "` + sid + `/full/max/0/default.jpg", "type": "Image", "format": "image/jpeg", "width": 40, "height": 30,
    "service": [{"id": "` + sid + `", "type": "ImageService3", "profile": "level0"}]}}]}]}]}`
	if err := IIIFManifest([]byte(manifest), files); err != nil {
		t.Fatal(err)
	}
	paths, err := IIIFImageService(files, "iiif/finds-1-1", sid)
	if err != nil || len(paths) != 3 {
		t.Errorf("paths %v, %v", paths, err)
	}
	for name, edit := range map[string][2]string{
		"context":       {`presentation/3/context.json`, `presentation/2/context.json`},
		"extra":         {`"type": "Manifest",`, `"type": "Manifest", "creator": "x",`},
		"https rights":  {`"http://creativecommons.org/`, `"https://creativecommons.org/`},
		"motivation":    {`"painting"`, `"commenting"`},
		"relative id":   {`"id": "https://x.org/m/1/canvas/1"`, `"id": "canvas/1"`},
		"body size":     {`"width": 40, "height": 30,` + "\n    \"service\"", `"width": 41, "height": 30,` + "\n    \"service\""},
		"no such image": {`/full/max/0/default.jpg"`, `/full/max/0/other.jpg"`},
		"no service":    {`iiif/finds-1-1"`, `iiif/finds-1-2"`},
		"not JSON":      {`{"@context"`, `["@context"`},
	} {
		bad := strings.Replace(manifest, edit[0], edit[1], 1)
		if bad == manifest {
			t.Fatalf("%s: %q not found", name, edit[0])
		}
		if IIIFManifest([]byte(bad), files) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Each file the service implies is needed; a wrong size is noticed.
	for p := range files {
		broken := fstest.MapFS{}
		for q, f := range files {
			if q != p {
				broken[q] = f
			}
		}
		if IIIFManifest([]byte(manifest), broken) == nil {
			t.Errorf("without %s: accepted", p)
		}
	}
	small := level0(t, "iiif/finds-1-1", sid, 20, 30)
	wrong := fstest.MapFS{}
	for p, f := range files {
		wrong[p] = f
	}
	wrong["iiif/finds-1-1/full/max/0/default.jpg"] = small["iiif/finds-1-1/full/max/0/default.jpg"]
	if err := IIIFManifest([]byte(manifest), wrong); err == nil || !strings.Contains(err.Error(), "its URL says") {
		t.Errorf("a full image of the wrong size: %v", err)
	}
	// A pyramid that does not reach one tile, and one that goes too far.
	for _, sf := range []string{`[1]`, `[1,2,4]`} {
		big := level0(t, "iiif/b", "https://x.org/iiif/b", 1000, 600)
		big["iiif/b/info.json"].Data = bytes.Replace(big["iiif/b/info.json"].Data, []byte(`"scaleFactors":[1]`), []byte(`"scaleFactors":`+sf), 1)
		if _, err := IIIFImageService(big, "iiif/b", "https://x.org/iiif/b"); err == nil || !strings.Contains(err.Error(), "tile") {
			t.Errorf("scale factors %s: %v", sf, err)
		}
	}
}
