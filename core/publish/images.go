package publish

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/strata-archaeo/strata/core/publish/crate"
	"github.com/strata-archaeo/strata/core/publish/iiif"
	"github.com/strata-archaeo/strata/core/schema"
)

// Images: a table whose setting says images publishes the raster images
// linked to its published records as IIIF level 0 services (static
// tiles) with one IIIF Presentation 3 manifest per record, under
//
//	iiif/<tb>/<id>/<n>/…          an image's info.json, tiles and sizes
//	iiif/<tb>/<id>/manifest.json  the record's manifest
//
// Their URIs are stable, like the records': <base>/data/iiif/…, answered
// from the latest version's crate. Only the pixels leave: a file's name,
// description and keywords are its uploader's notes, not published.

// imageOptions bound what one image costs: 2048 px on the longer side is
// enough to read a photograph and keeps a 100,000-record publication's
// tiles affordable; 40 megapixels decoded is the largest source read.
var imageOptions = iiif.ImageOptions{MaxSide: 2048, MaxPixels: 40_000_000}

// rasterMimes are the images IIIF publishes.
var rasterMimes = []any{"image/jpeg", "image/png", "image/gif", "image/webp"}

// recordImage is one image linked to a published record.
type recordImage struct {
	blobKey string
}

// loadImages reads the images linked to t's published records, in the
// records' own order of links.
func (b *build) loadImages(t *schema.Table) (map[int64][]recordImage, error) {
	tc := b.cfg.TableConfig(t.Name)
	if tc == nil || !tc.Images || b.store == nil {
		return nil, nil
	}
	q := `SELECT l.record_id, f.blob_key FROM ` + b.db.Sys("file_links") + ` l JOIN ` + b.db.Sys("files") + ` f ON f.id = l.file_id
WHERE l.tb = ? AND f.mime IN (` + placeholders(len(rasterMimes)) + `) ORDER BY l.record_id, l.sort, l.id`
	rows, err := b.db.Query(b.ctx, q, append([]any{t.Name}, rasterMimes...)...)
	if err != nil {
		return nil, fmt.Errorf("publish: images of %s: %w", t.Name, err)
	}
	defer rows.Close()
	out := map[int64][]recordImage{}
	for rows.Next() {
		var id int64
		var key string
		if err := rows.Scan(&id, &key); err != nil {
			return nil, err
		}
		if b.published[t.Name][id] {
			out[id] = append(out[id], recordImage{blobKey: key})
		}
	}
	return out, rows.Err()
}

// IIIFBase is where a publication's IIIF resources are answered.
func IIIFBase(base string) string { return base + "/data/iiif" }

func manifestPath(tb string, id int64) string {
	return "iiif/" + tb + "/" + strconv.FormatInt(id, 10) + "/manifest.json"
}

// manifestURI is a record's manifest's URI.
func (b *build) manifestURI(tb string, id int64) string {
	return b.fr.BaseURL + "/data/" + manifestPath(tb, id)
}

// zipSink gives the iiif package the zip, one file at a time, each
// described in the crate.
type zipSink struct {
	b    *build
	desc string
}

func (s zipSink) Create(path string) (io.WriteCloser, error) {
	ew, err := s.b.entry(path)
	if err != nil {
		return nil, err
	}
	return &sinkFile{entryWriter: ew, b: s.b, path: path, desc: s.desc}, nil
}

type sinkFile struct {
	*entryWriter
	b          *build
	path, desc string
}

func (f *sinkFile) Close() error {
	format := "image/jpeg"
	var conforms []string
	if len(f.path) > 9 && f.path[len(f.path)-9:] == "info.json" {
		format, conforms = "application/ld+json", []string{crate.ProfileIIIFImage3}
	}
	f.b.files = append(f.b.files, crateFile{Path: f.path, Name: f.desc, Format: format, ConformsTo: conforms, Size: f.n, SHA256: f.sum()})
	return nil
}

// writeRecordImages publishes one record's images and its manifest,
// reporting whether a manifest was written. An image that cannot be read
// (corrupt, too large, not an image after all, lost by the storage) is
// skipped and counted, never a failed publication.
func (b *build) writeRecordImages(t *schema.Table, id int64, label string, images []recordImage) (bool, error) {
	m := iiif.Manifest{ID: b.manifestURI(t.Name, id), Label: iiif.LangMap{"none": {label}}, Rights: licenceURL(b.cfg.Licence),
		Homepage: b.recordURI(t.Name, id), HomepageLabel: iiif.LangMap{"none": {label}},
		RequiredStatement: &iiif.MetadataEntry{Label: iiif.LangMap{"en": {"Attribution"}}, Value: iiif.LangMap{"none": {b.cfg.Title}}}}
	for n, img := range images {
		dir := "iiif/" + t.Name + "/" + strconv.FormatInt(id, 10) + "/" + strconv.Itoa(n+1)
		out, err := b.imageOf(dir, img, label)
		if err != nil {
			return false, err
		}
		if out == nil {
			continue
		}
		m.Canvases = append(m.Canvases, iiif.Canvas{ID: m.ID + "/canvas/" + strconv.Itoa(n+1),
			Label: iiif.LangMap{"none": {label + " " + strconv.Itoa(n+1)}}, Image: *out})
	}
	if len(m.Canvases) == 0 {
		return false, nil
	}
	err := b.add(crateFile{Path: manifestPath(t.Name, id), Name: label + " (IIIF manifest)", Format: "application/ld+json",
		ConformsTo: []string{crate.ProfileIIIFPresentation3}}, func(w io.Writer) error { return iiif.WriteManifest(w, m) })
	return err == nil, err
}

// imageOf writes one image's service; nil when the image is skipped.
func (b *build) imageOf(dir string, img recordImage, label string) (*iiif.Image, error) {
	blob, err := b.store.Get(b.ctx, b.app.Name, img.blobKey)
	if err != nil {
		b.skippedImages++
		return nil, nil // a file the storage lost: the files check reports it
	}
	defer blob.Close()
	out, err := iiif.WriteImage(zipSink{b: b, desc: label}, dir, b.fr.BaseURL+"/data/"+dir, blob, imageOptions)
	var tooLarge *iiif.TooLargeError
	switch {
	case err == nil:
		return &out, nil
	case errors.Is(err, iiif.ErrCorruptImage), errors.Is(err, iiif.ErrUnsupportedFormat), errors.As(err, &tooLarge):
		b.skippedImages++
		return nil, nil
	}
	return nil, fmt.Errorf("publish: image %s: %w", dir, err)
}
