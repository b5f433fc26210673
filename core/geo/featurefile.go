package geo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/paulmach/orb"

	"github.com/strata-archaeo/strata/core/errs"
)

// MaxFileFeatures bounds the features of one file (an import, a layer).
const MaxFileFeatures = 100000

var errTooManyFeatures = errs.New(errs.Invalid, "too_many_features", fmt.Sprintf("a file has at most %d features", MaxFileFeatures))

// FileFeature is one feature of a file: its geometry (in the file's
// coordinate system until converted) and its properties.
type FileFeature struct {
	Geometry   orb.Geometry
	Properties map[string]any
}

// FeatureFile is a GeoJSON file read whole.
type FeatureFile struct {
	Features []FileFeature
	// CRS is the EPSG code the file names (4326 when it names none).
	CRS int
}

type fileDoc struct {
	Type     string            `json:"type"`
	Features []json.RawMessage `json:"features"`
	CRS      *struct {
		Type       string `json:"type"`
		Properties struct {
			Name string `json:"name"`
		} `json:"properties"`
	} `json:"crs"`
	Properties map[string]any  `json:"properties"`
	Geometry   json.RawMessage `json:"geometry"`
}

// ParseCollection reads a GeoJSON FeatureCollection (or one Feature, or a
// bare geometry) and converts it to EPSG:4326 from the system its `crs`
// member names. Every geometry is checked; an error names the feature
// (index, from 0).
func ParseCollection(data []byte) (*FeatureFile, error) {
	return ParseCollectionIn(data, 0)
}

// ParseCollectionIn is ParseCollection with the coordinate system given
// (an EPSG code; 0: the file's own, else EPSG:4326).
func ParseCollectionIn(data []byte, crs int) (*FeatureFile, error) {
	var doc fileDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, ErrInvalidGeometry.With("detail", "not a GeoJSON file: "+err.Error())
	}
	if crs == 0 {
		crs = 4326
		if doc.CRS != nil {
			code, err := ParseCRS(doc.CRS.Properties.Name)
			if err != nil {
				return nil, err
			}
			crs = code
		}
	}
	pr, err := ProjectionOf(crs)
	if err != nil {
		return nil, err
	}
	out := &FeatureFile{CRS: crs, Features: []FileFeature{}}
	var raws []json.RawMessage
	switch doc.Type {
	case "FeatureCollection":
		raws = doc.Features
	case "Feature":
		raws = []json.RawMessage{bytes.TrimSpace(data)}
	default:
		raws = []json.RawMessage{bytes.TrimSpace(data)}
	}
	if len(raws) > MaxFileFeatures {
		return nil, errTooManyFeatures
	}
	for i, raw := range raws {
		var f struct {
			Type       string          `json:"type"`
			Properties map[string]any  `json:"properties"`
			Geometry   json.RawMessage `json:"geometry"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, ErrInvalidGeometry.With("index", i).With("detail", err.Error())
		}
		graw := raw
		if f.Type == "Feature" {
			graw = f.Geometry
		}
		g, err := ParseUnchecked(graw)
		if err == nil {
			if pr != nil {
				// Converted positions are kept to 1e-9 degrees (0.1 mm):
				// the series' float noise goes, no survey's precision.
				g = orb.Round(Project(g, pr), 1e9)
			}
			err = Validate(g, true)
		}
		if err != nil {
			return nil, withIndex(err, i)
		}
		if f.Properties == nil {
			f.Properties = map[string]any{}
		}
		out.Features = append(out.Features, FileFeature{Geometry: g, Properties: f.Properties})
	}
	return out, nil
}

// Types lists the geometry types of the file, sorted.
func (f *FeatureFile) Types() []string {
	seen := map[string]bool{}
	for _, ft := range f.Features {
		seen[ft.Geometry.GeoJSONType()] = true
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// PropertyNames lists the properties features carry, sorted.
func (f *FeatureFile) PropertyNames() []string {
	seen := map[string]bool{}
	for _, ft := range f.Features {
		for k := range ft.Properties {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
