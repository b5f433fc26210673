package iiif

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// LangMap is a IIIF language map: BCP 47 language tag (or "none") to one or more strings.
// Keys are written sorted.
type LangMap map[string][]string

// MetadataEntry is one label/value pair of a manifest's metadata (or its requiredStatement).
type MetadataEntry struct {
	Label LangMap
	Value LangMap
}

// Manifest is one record's IIIF Presentation API 3.0 manifest.
type Manifest struct {
	// ID is the manifest's URI (absolute http(s)), where it is published.
	ID string
	// Label names the record (required, at least one language).
	Label LangMap
	// Summary describes it (optional).
	Summary LangMap
	// Metadata are the record's public fields as label/value pairs, in the order given.
	Metadata []MetadataEntry
	// Rights is the licence URI. IIIF allows only Creative Commons and RightsStatements.org
	// URIs in "rights", in their http form: an https one of those is written as http; any
	// other licence URI is written as a metadata entry labelled RightsLabel instead.
	Rights string
	// RightsLabel labels a licence that cannot go in "rights" (default {"en": ["License"]}).
	RightsLabel LangMap
	// RequiredStatement is the attribution a viewer must show (optional), e.g.
	// {Label: {"en": ["Attribution"]}, Value: {"none": ["Excavation of X, CC BY 4.0"]}}.
	RequiredStatement *MetadataEntry
	// Homepage is the record's landing page (optional), labelled HomepageLabel (default
	// Label).
	Homepage      string
	HomepageLabel LangMap
	// Canvases are the record's images, at least one.
	Canvases []Canvas
}

// Canvas is one image of a manifest: a canvas the size of the published image, painted by
// it, with its level 0 image service.
type Canvas struct {
	// ID is the canvas URI, unique within the manifest (e.g. the manifest id + "/canvas/1").
	ID string
	// Label names the image (optional).
	Label LangMap
	// Image is what WriteImage returned for it.
	Image Image
	// ThumbnailMaxSide picks the canvas thumbnail: the largest of Image.Sizes whose longer
	// side is at most this (default 400); no thumbnail if none is that small.
	ThumbnailMaxSide int
}

type jsonLangMap = LangMap

type jsonEntry struct {
	Label jsonLangMap `json:"label"`
	Value jsonLangMap `json:"value"`
}

type jsonManifest struct {
	Context           string       `json:"@context"`
	ID                string       `json:"id"`
	Type              string       `json:"type"`
	Label             jsonLangMap  `json:"label"`
	Summary           jsonLangMap  `json:"summary,omitempty"`
	Metadata          []jsonEntry  `json:"metadata,omitempty"`
	RequiredStatement *jsonEntry   `json:"requiredStatement,omitempty"`
	Rights            string       `json:"rights,omitempty"`
	Homepage          []jsonText   `json:"homepage,omitempty"`
	Items             []jsonCanvas `json:"items"`
}

type jsonText struct {
	ID     string      `json:"id"`
	Type   string      `json:"type"`
	Label  jsonLangMap `json:"label"`
	Format string      `json:"format"`
}

type jsonCanvas struct {
	ID        string      `json:"id"`
	Type      string      `json:"type"`
	Label     jsonLangMap `json:"label,omitempty"`
	Width     int         `json:"width"`
	Height    int         `json:"height"`
	Thumbnail []jsonImage `json:"thumbnail,omitempty"`
	Items     []jsonPage  `json:"items"`
}

type jsonPage struct {
	ID    string     `json:"id"`
	Type  string     `json:"type"`
	Items []jsonAnno `json:"items"`
}

type jsonAnno struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	Motivation string    `json:"motivation"`
	Body       jsonImage `json:"body"`
	Target     string    `json:"target"`
}

type jsonImage struct {
	ID      string        `json:"id"`
	Type    string        `json:"type"`
	Format  string        `json:"format"`
	Width   int           `json:"width"`
	Height  int           `json:"height"`
	Service []jsonService `json:"service"`
}

type jsonService struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Profile string `json:"profile"`
}

// langTag accepts "none" and the shape of a BCP 47 tag (a 1-8 letter primary subtag, then
// hyphenated 1-8 character alphanumeric subtags).
var langTag = regexp.MustCompile(`^(none|[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*)$`)

func checkLangMap(what string, m LangMap, required bool) error {
	if len(m) == 0 {
		if required {
			return fmt.Errorf("iiif: %s is required", what)
		}
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad key reported is the same on every run
	for _, k := range keys {
		if !langTag.MatchString(k) {
			return fmt.Errorf("iiif: %s: %q is not a language tag or \"none\"", what, k)
		}
		if len(m[k]) == 0 {
			return fmt.Errorf("iiif: %s: language %q has no values", what, k)
		}
	}
	return nil
}

// isIIIFRights reports whether u may stand in "rights", returning its http form.
func isIIIFRights(u string) (string, bool) {
	for _, p := range []string{"creativecommons.org/licenses/", "creativecommons.org/publicdomain/", "rightsstatements.org/vocab/"} {
		for _, scheme := range []string{"http://", "https://"} {
			if strings.HasPrefix(u, scheme+p) {
				return "http://" + strings.TrimPrefix(u, scheme), true
			}
		}
	}
	return "", false
}

// WriteManifest writes m as a IIIF Presentation API 3.0 manifest: deterministic, indented
// JSON, with "<", ">" and "&" escaped so that hostile labels stay inert in HTML. Each canvas
// holds one AnnotationPage with one painting Annotation whose body is the full image (type
// Image, format image/jpeg) with its level 0 service (type ImageService3, profile level0).
// It checks what IIIF requires (absolute http(s) ids, unique canvas ids, a label, language
// tags, positive dimensions) and writes nothing if a check fails.
func WriteManifest(w io.Writer, m Manifest) error {
	if err := checkHTTPURI(m.ID); err != nil {
		return fmt.Errorf("iiif: manifest id: %w", err)
	}
	if err := checkLangMap("manifest label", m.Label, true); err != nil {
		return err
	}
	if err := checkLangMap("manifest summary", m.Summary, false); err != nil {
		return err
	}
	out := jsonManifest{
		Context: PresentationContext, ID: m.ID, Type: "Manifest",
		Label: m.Label, Summary: m.Summary,
	}
	for i, e := range m.Metadata {
		if err := checkEntry(fmt.Sprintf("metadata[%d]", i), e); err != nil {
			return err
		}
		out.Metadata = append(out.Metadata, jsonEntry(e))
	}
	if m.Rights != "" {
		if err := checkHTTPURI(m.Rights); err != nil {
			return fmt.Errorf("iiif: rights: %w", err)
		}
		if r, ok := isIIIFRights(m.Rights); ok {
			out.Rights = r
		} else {
			label := m.RightsLabel
			if len(label) == 0 {
				label = LangMap{"en": {"License"}}
			}
			e := MetadataEntry{Label: label, Value: LangMap{"none": {m.Rights}}}
			if err := checkEntry("rights label", e); err != nil {
				return err
			}
			out.Metadata = append(out.Metadata, jsonEntry(e))
		}
	}
	if m.RequiredStatement != nil {
		if err := checkEntry("requiredStatement", *m.RequiredStatement); err != nil {
			return err
		}
		rs := jsonEntry(*m.RequiredStatement)
		out.RequiredStatement = &rs
	}
	if m.Homepage != "" {
		if err := checkHTTPURI(m.Homepage); err != nil {
			return fmt.Errorf("iiif: homepage: %w", err)
		}
		label := m.HomepageLabel
		if len(label) == 0 {
			label = m.Label
		}
		if err := checkLangMap("homepage label", label, true); err != nil {
			return err
		}
		out.Homepage = []jsonText{{ID: m.Homepage, Type: "Text", Label: label, Format: "text/html"}}
	}
	if len(m.Canvases) == 0 {
		return fmt.Errorf("iiif: manifest %s has no canvas", m.ID)
	}
	seen := map[string]bool{m.ID: true}
	for i, c := range m.Canvases {
		jc, err := canvasJSON(c)
		if err != nil {
			return fmt.Errorf("iiif: canvas %d: %w", i, err)
		}
		for _, id := range []string{jc.ID, jc.Items[0].ID, jc.Items[0].Items[0].ID} {
			if seen[id] {
				return fmt.Errorf("iiif: canvas %d: id %s used twice", i, id)
			}
			seen[id] = true
		}
		out.Items = append(out.Items, jc)
	}
	// Encode into memory first so that a failure writes nothing; a manifest is small.
	var buf bytes.Buffer
	if err := encodeJSON(&buf, out); err != nil {
		return fmt.Errorf("iiif: encode manifest %s: %w", m.ID, err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("iiif: write manifest %s: %w", m.ID, err)
	}
	return nil
}

func checkEntry(what string, e MetadataEntry) error {
	if err := checkLangMap(what+" label", e.Label, true); err != nil {
		return err
	}
	return checkLangMap(what+" value", e.Value, true)
}

func canvasJSON(c Canvas) (jsonCanvas, error) {
	if err := checkHTTPURI(c.ID); err != nil {
		return jsonCanvas{}, fmt.Errorf("id: %w", err)
	}
	if err := checkLangMap("label", c.Label, false); err != nil {
		return jsonCanvas{}, err
	}
	im := c.Image
	if err := checkHTTPURI(im.ServiceID); err != nil {
		return jsonCanvas{}, fmt.Errorf("image service id: %w", err)
	}
	if im.Width <= 0 || im.Height <= 0 {
		return jsonCanvas{}, fmt.Errorf("image %s has no dimensions (%dx%d)", im.ServiceID, im.Width, im.Height)
	}
	service := []jsonService{{ID: im.ServiceID, Type: "ImageService3", Profile: "level0"}}
	jc := jsonCanvas{
		ID: c.ID, Type: "Canvas", Label: c.Label, Width: im.Width, Height: im.Height,
		Items: []jsonPage{{
			ID: c.ID + "/page", Type: "AnnotationPage",
			Items: []jsonAnno{{
				ID: c.ID + "/page/image", Type: "Annotation", Motivation: "painting",
				Body: jsonImage{
					ID: im.FullURI(), Type: "Image", Format: "image/jpeg",
					Width: im.Width, Height: im.Height, Service: service,
				},
				Target: c.ID,
			}},
		}},
	}
	maxSide := c.ThumbnailMaxSide
	if maxSide == 0 {
		maxSide = 400
	}
	var thumb *Size
	for i, s := range im.Sizes {
		if max(s.Width, s.Height) <= maxSide && (thumb == nil || s.Width*s.Height > thumb.Width*thumb.Height) {
			thumb = &im.Sizes[i]
		}
	}
	if thumb != nil {
		jc.Thumbnail = []jsonImage{{
			ID:   fmt.Sprintf("%s/full/%d,%d/0/default.jpg", im.ServiceID, thumb.Width, thumb.Height),
			Type: "Image", Format: "image/jpeg", Width: thumb.Width, Height: thumb.Height,
			Service: service,
		}}
	}
	return jc, nil
}
