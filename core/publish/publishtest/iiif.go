package publishtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/jpeg"
	"io/fs"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// The IIIF rules below encode those of the IIIF presentation validator's
// JSON schema (iiif_3_0.json, which may not be redistributed) and of the
// Presentation API 3.0 and Image API 3.0 texts that apply to what
// core/publish/iiif writes.
var (
	httpID      = regexp.MustCompile(`^http.*$`)
	schemaLang  = regexp.MustCompile(`^([a-zA-Z-][a-zA-Z-]*|none)$`)
	mimeType    = regexp.MustCompile(`^[a-z][a-z]*/.*$`)
	iiifRights  = regexp.MustCompile(`^http://(creativecommons\.org/licenses/|creativecommons\.org/publicdomain/|rightsstatements\.org/vocab/)`)
	manifestKey = map[string]bool{"@context": true, "id": true, "type": true, "label": true, "summary": true, "metadata": true, "requiredStatement": true, "rights": true, "homepage": true, "thumbnail": true, "items": true, "provider": true, "seeAlso": true, "partOf": true, "navDate": true, "behavior": true, "service": true, "services": true, "rendering": true, "viewingDirection": true, "start": true, "structures": true, "annotations": true, "navPlace": true, "placeholderCanvas": true, "accompanyingCanvas": true}
	pageKey     = map[string]bool{"@context": true, "id": true, "type": true, "label": true, "items": true, "rendering": true, "service": true, "thumbnail": true, "partOf": true, "next": true, "prev": true, "first": true, "last": true}
)

// IIIFPresentationProblems returns every violation of the IIIF
// Presentation 3 rules found in a manifest (none: nil).
func IIIFPresentationProblems(raw []byte) []string {
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return []string{"not a JSON object: " + err.Error()}
	}
	obj := func(where string, v any) map[string]any {
		m, ok := v.(map[string]any)
		if !ok {
			bad("%s: not an object", where)
		}
		return m
	}
	arr := func(where string, v any) []any {
		a, ok := v.([]any)
		if !ok {
			bad("%s: not an array", where)
		}
		return a
	}
	id := func(where string, v any) string {
		s, ok := v.(string)
		if !ok || !httpID.MatchString(s) {
			bad("%s: id %v is not an http URI", where, v)
		}
		return s
	}
	str := func(where string, v any, want string) {
		if s, ok := v.(string); !ok || s != want {
			bad("%s: %v, want %q", where, v, want)
		}
	}
	dim := func(where string, v any) {
		f, ok := v.(float64)
		if !ok || f <= 0 || f != float64(int(f)) {
			bad("%s: %v is not a positive integer", where, v)
		}
	}
	lng := func(where string, v any) {
		for k, vals := range obj(where, v) {
			if !schemaLang.MatchString(k) {
				bad("%s: language key %q", where, k)
			}
			for i, s := range arr(where+"."+k, vals) {
				if _, ok := s.(string); !ok {
					bad("%s.%s[%d]: not a string", where, k, i)
				}
			}
		}
	}
	entry := func(where string, v any) {
		m := obj(where, v)
		if m["label"] == nil || m["value"] == nil {
			bad("%s: label and value required", where)
		}
		lng(where+".label", m["label"])
		lng(where+".value", m["value"])
	}
	image := func(where string, v any) {
		b := obj(where, v)
		id(where, b["id"])
		str(where+".type", b["type"], "Image")
		if f, _ := b["format"].(string); !mimeType.MatchString(f) {
			bad("%s.format %q", where, f)
		}
		dim(where+".width", b["width"])
		dim(where+".height", b["height"])
		for i, sv := range arr(where+".service", b["service"]) {
			s := obj(where+".service", sv)
			id(fmt.Sprintf("%s.service[%d]", where, i), s["id"])
			str(where+".service.type", s["type"], "ImageService3")
			str(where+".service.profile", s["profile"], "level0")
		}
	}

	for k := range doc {
		if !manifestKey[k] {
			bad("manifest: property %q not allowed", k)
		}
	}
	str("@context", doc["@context"], "http://iiif.io/api/presentation/3/context.json")
	mid := id("manifest", doc["id"])
	str("manifest.type", doc["type"], "Manifest")
	if doc["label"] == nil || doc["items"] == nil {
		bad("manifest: label and items required")
	}
	lng("label", doc["label"])
	if v, ok := doc["summary"]; ok {
		lng("summary", v)
	}
	if v, ok := doc["metadata"]; ok {
		for i, e := range arr("metadata", v) {
			entry(fmt.Sprintf("metadata[%d]", i), e)
		}
	}
	if v, ok := doc["requiredStatement"]; ok {
		entry("requiredStatement", v)
	}
	if v, ok := doc["rights"]; ok {
		if s, _ := v.(string); !iiifRights.MatchString(s) {
			bad("rights %v is not a CC or RightsStatements.org http URI", v)
		}
	}
	if v, ok := doc["homepage"]; ok {
		for i, h := range arr("homepage", v) {
			m := obj("homepage", h)
			id(fmt.Sprintf("homepage[%d]", i), m["id"])
			if _, ok := m["type"].(string); !ok {
				bad("homepage[%d]: type required", i)
			}
			if m["label"] == nil {
				bad("homepage[%d]: label required", i)
			}
			lng("homepage.label", m["label"])
			if f, _ := m["format"].(string); !mimeType.MatchString(f) {
				bad("homepage.format %q", f)
			}
		}
	}
	items := arr("items", doc["items"])
	if len(items) == 0 {
		bad("manifest: no canvas")
	}
	seen := map[string]bool{}
	unique := func(s string) {
		if seen[s] {
			bad("id %s used twice", s)
		}
		seen[s] = true
	}
	unique(mid)
	for ci, cv := range items {
		where := fmt.Sprintf("items[%d]", ci)
		c := obj(where, cv)
		cid := id(where, c["id"])
		unique(cid)
		str(where+".type", c["type"], "Canvas")
		dim(where+".width", c["width"])
		dim(where+".height", c["height"])
		if v, ok := c["label"]; ok {
			lng(where+".label", v)
		}
		if v, ok := c["thumbnail"]; ok {
			for i, th := range arr(where+".thumbnail", v) {
				image(fmt.Sprintf("%s.thumbnail[%d]", where, i), th)
			}
		}
		pages := arr(where+".items", c["items"])
		if len(pages) != 1 {
			bad("%s: %d annotation pages, want 1", where, len(pages))
		}
		for pi, pv := range pages {
			pw := fmt.Sprintf("%s.items[%d]", where, pi)
			p := obj(pw, pv)
			for k := range p {
				if !pageKey[k] {
					bad("%s: property %q not allowed", pw, k)
				}
			}
			unique(id(pw, p["id"]))
			str(pw+".type", p["type"], "AnnotationPage")
			for ai, av := range arr(pw+".items", p["items"]) {
				aw := fmt.Sprintf("%s.items[%d]", pw, ai)
				a := obj(aw, av)
				unique(id(aw, a["id"]))
				str(aw+".type", a["type"], "Annotation")
				str(aw+".motivation", a["motivation"], "painting")
				str(aw+".target", a["target"], cid)
				image(aw+".body", a["body"])
				body := obj(aw, a["body"])
				if body["width"] != c["width"] || body["height"] != c["height"] {
					bad("%s: body %vx%v on a canvas %vx%v", aw, body["width"], body["height"], c["width"], c["height"])
				}
			}
		}
	}
	return errs
}

// IIIFManifest checks a IIIF Presentation 3 manifest: the rules of
// IIIFPresentationProblems and, when files is not nil, that every image it
// paints or shows as a thumbnail is in files (the crate, rooted where the
// image services' URLs end: a service .../iiif/x is the folder iiif/x of
// files, found as the longest tail of the URL's path holding info.json),
// and that each image service is a complete level 0 service
// (IIIFImageService).
func IIIFManifest(raw []byte, files fs.FS) error {
	var errs []error
	for _, p := range IIIFPresentationProblems(raw) {
		errs = append(errs, errors.New("publishtest: IIIF manifest: "+p))
	}
	if len(errs) > 0 || files == nil {
		return errors.Join(errs...)
	}
	// The structure is known to be right: collect the images.
	var doc struct {
		Items []struct {
			Thumbnail []iiifImage `json:"thumbnail"`
			Items     []struct {
				Items []struct {
					Body iiifImage `json:"body"`
				} `json:"items"`
			} `json:"items"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("publishtest: IIIF manifest: %w", err)
	}
	var images []iiifImage
	for _, c := range doc.Items {
		images = append(images, c.Thumbnail...)
		for _, p := range c.Items {
			for _, a := range p.Items {
				images = append(images, a.Body)
			}
		}
	}
	services := map[string][]string{} // service id → its files
	for _, im := range images {
		if len(im.Service) != 1 {
			errs = append(errs, fmt.Errorf("publishtest: IIIF manifest: image %s has %d services, want 1", im.ID, len(im.Service)))
			continue
		}
		sid := im.Service[0].ID
		paths, done := services[sid]
		dir, err := serviceDir(files, sid)
		if err == nil && !done {
			paths, err = IIIFImageService(files, dir, sid)
			services[sid] = paths
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rest, ok := strings.CutPrefix(im.ID, sid+"/")
		if !ok {
			errs = append(errs, fmt.Errorf("publishtest: IIIF manifest: image %s is not under its service %s", im.ID, sid))
			continue
		}
		if p := dir + "/" + rest; !contains(paths, p) {
			errs = append(errs, fmt.Errorf("publishtest: IIIF manifest: image %s (%s) is not a file of its service", im.ID, p))
		}
	}
	return errors.Join(errs...)
}

type iiifImage struct {
	ID      string `json:"id"`
	Service []struct {
		ID string `json:"id"`
	} `json:"service"`
}

func contains(sorted []string, s string) bool {
	i := sort.SearchStrings(sorted, s)
	return i < len(sorted) && sorted[i] == s
}

// serviceDir finds the folder of files that serves an image service: the
// longest tail of the service URL's path under which info.json exists.
func serviceDir(files fs.FS, serviceID string) (string, error) {
	u, err := url.Parse(serviceID)
	if err != nil || !u.IsAbs() {
		return "", fmt.Errorf("publishtest: IIIF image service %q is not an absolute URL", serviceID)
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := range segs {
		dir := strings.Join(segs[i:], "/")
		if !fs.ValidPath(dir) {
			continue
		}
		if _, err := fs.Stat(files, dir+"/info.json"); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("publishtest: IIIF image service %s: no info.json under any tail of its path", serviceID)
}

// imageInfo is what a level 0 client reads from info.json; unknown fields
// are an error, so that anything written beyond what is checked shows.
type imageInfo struct {
	Context  string `json:"@context"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Protocol string `json:"protocol"`
	Profile  string `json:"profile"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	Sizes    []struct {
		Width  int `json:"width"`
		Height int `json:"height"`
	} `json:"sizes"`
	Tiles []struct {
		Width        int   `json:"width"`
		Height       int   `json:"height"`
		ScaleFactors []int `json:"scaleFactors"`
	} `json:"tiles"`
}

func cdiv(a, b int) int { return (a + b - 1) / b }

// IIIFImageService reads dir/info.json from files as a level 0 client
// would, checks it by the rules of Image API 3.0 (context, id equal to
// serviceID, ImageService3, level0, ascending sizes within the image, one
// set of square tiles whose scale factors are successive powers of two down
// to the level that fits one tile and no further), computes every URL such
// a client may request — info.json, full/max, each listed size, each tile
// at each scale factor, and the canonical "full" form of a whole-image
// tile — and checks that each is in files, a JPEG of the size its URL
// names. It returns those paths, sorted.
func IIIFImageService(files fs.FS, dir, serviceID string) ([]string, error) {
	fail := func(f string, a ...any) error {
		return fmt.Errorf("publishtest: IIIF image service %s: "+f, append([]any{dir}, a...)...)
	}
	raw, err := fs.ReadFile(files, dir+"/info.json")
	if err != nil {
		return nil, fail("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var in imageInfo
	if err := dec.Decode(&in); err != nil {
		return nil, fail("info.json: %v", err)
	}
	var errs []error
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"@context is the Image API 3 context", in.Context == "http://iiif.io/api/image/3/context.json"},
		{"id is the service id " + serviceID, in.ID == serviceID},
		{"type is ImageService3", in.Type == "ImageService3"},
		{"protocol is http://iiif.io/api/image", in.Protocol == "http://iiif.io/api/image"},
		{"profile is level0", in.Profile == "level0"},
		{"width and height are positive", in.Width > 0 && in.Height > 0},
		{"one tile set", len(in.Tiles) == 1},
	} {
		if !c.ok {
			errs = append(errs, fail("info.json: %s fails", c.name))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	W, H := in.Width, in.Height
	full := dir + "/full/max/0/default.jpg"
	want := map[string][2]int{full: {W, H}}
	prev := 0
	for _, sz := range in.Sizes {
		if sz.Width <= 0 || sz.Height <= 0 || sz.Width > W || sz.Height > H {
			errs = append(errs, fail("size %dx%d outside 1..%dx%d", sz.Width, sz.Height, W, H))
		}
		if sz.Width*sz.Height <= prev {
			errs = append(errs, fail("sizes not strictly ascending: %v", in.Sizes))
		}
		prev = sz.Width * sz.Height
		want[fmt.Sprintf("%s/full/%d,%d/0/default.jpg", dir, sz.Width, sz.Height)] = [2]int{sz.Width, sz.Height}
	}
	ts := in.Tiles[0]
	if ts.Width <= 0 || ts.Height != ts.Width {
		return nil, errors.Join(append(errs, fail("tiles %+v: want square tiles", ts))...)
	}
	if len(ts.ScaleFactors) == 0 || ts.ScaleFactors[0] != 1 {
		return nil, errors.Join(append(errs, fail("scaleFactors %v must start at 1", ts.ScaleFactors))...)
	}
	for i, sf := range ts.ScaleFactors {
		if i > 0 && sf != 2*ts.ScaleFactors[i-1] {
			return nil, errors.Join(append(errs, fail("scaleFactors %v are not successive powers of two", ts.ScaleFactors))...)
		}
	}
	// The pyramid must reach a level that fits in one tile, and stop there.
	last := ts.ScaleFactors[len(ts.ScaleFactors)-1]
	if cdiv(W, last) > ts.Width || cdiv(H, last) > ts.Height {
		errs = append(errs, fail("smallest level %dx%d does not fit one tile", cdiv(W, last), cdiv(H, last)))
	}
	if len(ts.ScaleFactors) > 1 {
		pl := ts.ScaleFactors[len(ts.ScaleFactors)-2]
		if cdiv(W, pl) <= ts.Width && cdiv(H, pl) <= ts.Height {
			errs = append(errs, fail("scale factor %d is superfluous: level %d already fits one tile", last, pl))
		}
	}
	sizes := map[string]bool{}
	for p := range want {
		sizes[p] = true
	}
	for _, sf := range ts.ScaleFactors {
		step := ts.Width * sf
		for y := 0; y < H; y += step {
			for x := 0; x < W; x += step {
				rw, rh := min(step, W-x), min(step, H-y)
				sw, sh := cdiv(rw, sf), cdiv(rh, sf)
				want[fmt.Sprintf("%s/%d,%d,%d,%d/%d,%d/0/default.jpg", dir, x, y, rw, rh, sw, sh)] = [2]int{sw, sh}
				if rw == W && rh == H {
					// A client using the canonical form asks for "full" here
					// (and "max" at full size): that file must exist too.
					canon := fmt.Sprintf("%s/full/%d,%d/0/default.jpg", dir, sw, sh)
					if sf == 1 {
						canon = full
					}
					if !sizes[canon] {
						errs = append(errs, fail("whole-image tile at scale %d: canonical %s is not published", sf, canon))
					}
				}
			}
		}
	}
	paths := []string{dir + "/info.json"}
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		d, ok := want[p]
		if !ok {
			continue // info.json, read above
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			errs = append(errs, fail("missing %s", p))
			continue
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			errs = append(errs, fail("%s: %v", p, err))
			continue
		}
		if cfg.Width != d[0] || cfg.Height != d[1] {
			errs = append(errs, fail("%s is %dx%d, its URL says %dx%d", p, cfg.Width, cfg.Height, d[0], d[1]))
		}
	}
	return paths, errors.Join(errs...)
}
