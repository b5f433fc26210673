package publish

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/publish/crate"
	"github.com/strata-archaeo/strata/core/publish/datacite"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// KindSnapshot is the job kind that makes a snapshot.
const KindSnapshot = "publish.snapshot"

// Host is what publishing needs from the server: the application's
// catalog as records see it.
type Host interface {
	Catalog(ctx context.Context, a *apps.App) (*schema.Catalog, error)
}

// Deps are publishing's dependencies.
type Deps struct {
	Apps   *apps.Registry
	Host   Host
	Files  files.Storage
	Jobs   *jobs.System
	TmpDir string
	// PublicURL is the instance's public address (SERVICE_PUBLIC_URL);
	// without it a snapshot's URIs are under the address of the request
	// that started it.
	PublicURL string
	Now       func() time.Time
}

type snapshotArgs struct {
	Snapshot int64 `json:"snapshot"`
}

// Register adds the snapshot and DOI job kinds. The snapshot job acts as
// nobody: it reads through the public gate of the setting the snapshot
// froze; once done with a DOI provider in that setting, it queues the
// minting (mint.go).
func Register(d Deps) {
	d.Jobs.Register(KindSnapshot, func(ctx context.Context, run *jobs.Run) (any, error) {
		var a snapshotArgs
		if err := run.Bind(&a); err != nil {
			return nil, err
		}
		app, err := d.Apps.Get(ctx, run.App())
		if err != nil {
			return nil, err
		}
		s, err := getSnapshot(ctx, app.DB, a.Snapshot)
		if err != nil {
			return nil, err
		}
		if s.Status != StatusRunning {
			return nil, fmt.Errorf("publish: snapshot %d is %s", s.ID, s.Status)
		}
		res, err := d.makeSnapshot(ctx, app, s, run.Progress)
		if err != nil {
			// Recorded with a fresh context: the job's may be cancelled.
			if ferr := failSnapshot(context.WithoutCancel(ctx), app.DB, s.ID, err); ferr != nil {
				return nil, errors.Join(err, ferr)
			}
			return nil, err
		}
		if fr := s.Frozen(); fr.Config.DOI.Provider != "" {
			d.queueDOI(ctx, app, s.ID, run.User())
		}
		return res, nil
	})
	registerDOI(d)
}

// snapshotResult is the job's result.
type snapshotResult struct {
	Snapshot int64 `json:"snapshot"`
	Version  int64 `json:"version"`
	Records  int64 `json:"records"`
	Files    int64 `json:"files"`
	Size     int64 `json:"size"`
	// SkippedImages are images that could not be read (corrupt, too
	// large, lost by the storage): published without them.
	SkippedImages int64 `json:"skipped_images"`
}

// makeSnapshot builds the crate of s and makes it the next version.
func (d Deps) makeSnapshot(ctx context.Context, app *apps.App, s *Snapshot, progress func(done, total int64)) (*snapshotResult, error) {
	cat, err := d.Host.Catalog(ctx, app)
	if err != nil {
		return nil, err
	}
	fr := s.Frozen()
	cfg := fr.Config
	// The schema may have changed since the setting was saved: a table or
	// field gone is an error the admin must see, never a silent gap.
	if err := cfg.Validate(ctx, app.DB, cat); err != nil {
		return nil, err
	}
	// A run the job system restarts (a node died) starts again from clean.
	if _, err := app.DB.Exec(ctx, `DELETE FROM `+app.DB.Sys("publish_items")+` WHERE snapshot = ?`, s.ID); err != nil {
		return nil, err
	}
	version := int64(1)
	if s.Previous != nil {
		version = *s.Previous + 1
	}
	b := &build{ctx: ctx, db: app.DB, app: app, snap: s, fr: fr, cfg: &cfg, gate: NewGate(app.DB, cat, &cfg),
		now: d.now().UTC().Truncate(time.Second), tmpDir: d.TmpDir, progress: progress, store: d.Files}
	if s.Previous != nil {
		prev, err := snapshotByVersion(ctx, app.DB, *s.Previous)
		if err != nil {
			return nil, err
		}
		b.prevItems = prev.ID
	}
	out, err := os.CreateTemp(d.TmpDir, "publish-crate-*.zip")
	if err != nil {
		return nil, fmt.Errorf("publish: scratch file: %w", err)
	}
	defer func() { out.Close(); os.Remove(out.Name()) }()
	sum := sha256.New()
	counted := &countingWriter{w: io.MultiWriter(out, sum)}
	b.zw = zip.NewWriter(counted)
	if err := b.collectIDs(); err != nil {
		return nil, err
	}
	if progress != nil {
		progress(0, b.total)
	}
	for _, t := range b.tables() {
		if err := b.tablePass(t); err != nil {
			return nil, err
		}
	}
	if err := b.carryDeleted(); err != nil {
		return nil, err
	}
	if err := b.finish(version); err != nil {
		return nil, err
	}
	if err := b.zw.Close(); err != nil {
		return nil, err
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	key, size, err := d.Files.Put(ctx, app.Name, out)
	if err != nil {
		return nil, fmt.Errorf("publish: store the crate: %w", err)
	}
	f := finished{BlobKey: key, Size: size, SHA256: hex.EncodeToString(sum.Sum(nil)), Records: b.records,
		Files: int64(len(b.files)) + 1, Published: b.now, Version: version}
	if err := doneSnapshot(context.WithoutCancel(ctx), app.DB, s.ID, f); err != nil {
		_ = d.Files.Delete(context.WithoutCancel(ctx), app.Name, key)
		return nil, err
	}
	return &snapshotResult{Snapshot: s.ID, Version: version, Records: b.records, Files: f.Files, Size: size, SkippedImages: b.skippedImages}, nil
}

func (d Deps) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// citeAs is the snapshot's address to cite: its landing page (its DOI
// once one is minted, which the landing page then shows).
func (b *build) citeAs(version int64) string { return SnapshotURI(b.fr.BaseURL, version) }

// finish writes the package, DataCite and RO-Crate descriptions.
func (b *build) finish(version int64) error {
	cfg := b.cfg
	lic, _ := LicenceOf(cfg.Licence)
	landing := SnapshotURI(b.fr.BaseURL, version)
	pkg := crate.Package{Name: packageName(b.app.Name), Title: cfg.Title, Description: cfg.Description, Version: strconv.FormatInt(version, 10),
		Created: b.now, Licenses: []crate.License{{URI: lic.URL, Name: lic.Name, SPDX: lic.ID}}}
	for _, r := range b.resources {
		pkg.Resources = append(pkg.Resources, crate.Resource{Name: r.name, Path: r.path, Title: r.title, Bytes: r.bytes, Hash: r.hash,
			Schema: crate.Schema{Fields: r.fields, PrimaryKey: []string{"id"}, ForeignKeys: r.foreignKeys}})
	}
	if err := b.add(crateFile{Path: "datapackage.json", Name: "Data package", Description: "The tables as a Frictionless data package: field types, primary and foreign keys.",
		Format: "application/json", ConformsTo: []string{crate.ProfileFrictionlessPackage}}, func(w io.Writer) error {
		return crate.WriteDataPackage(w, pkg)
	}); err != nil {
		return err
	}
	meta := b.dataciteMetadata(version, landing)
	xml, err := meta.XML()
	if err != nil {
		return err
	}
	if err := b.add(crateFile{Path: "datacite.xml", Name: "DataCite metadata", Description: "The dataset's DataCite metadata (schema 4).",
		Format: "application/xml", ConformsTo: []string{crate.ProfileDataCite4}}, func(w io.Writer) error {
		_, err := w.Write(xml)
		return err
	}); err != nil {
		return err
	}
	desc := cfg.Description
	if desc == "" {
		// RO-Crate requires a description; a setting may leave it out.
		desc = cfg.Title + ": " + strconv.FormatInt(b.records, 10) + " records published with Strata."
	}
	ds := crate.Dataset{Name: cfg.Title, Description: desc, DatePublished: b.now, Version: strconv.FormatInt(version, 10),
		CiteAs: b.citeAs(version), URL: landing, Keywords: cfg.Keywords,
		License: crate.License{URI: lic.URL, Name: lic.Name, SPDX: lic.ID}}
	if cfg.Publisher != "" {
		ds.Publisher = &crate.Organization{Name: cfg.Publisher}
	}
	for _, a := range cfg.Authors {
		p := crate.Person{Name: a.Name, GivenName: a.GivenName, FamilyName: a.FamilyName, ORCID: a.ORCID}
		if a.Affiliation != "" {
			p.Affiliation = &crate.Organization{Name: a.Affiliation}
		}
		ds.Authors = append(ds.Authors, p)
	}
	if b.snap.Previous != nil {
		ds.PreviousVersion = SnapshotURI(b.fr.BaseURL, *b.snap.Previous)
	}
	// A folder is described only when it holds files (RO-Crate refuses
	// an empty one).
	used := map[string]bool{}
	for _, f := range b.files {
		if i := strings.IndexByte(f.Path, '/'); i > 0 {
			used[f.Path[:i]] = true
		}
	}
	for _, d := range []crate.Directory{
		{Path: "data", Name: "Tables", Description: "One CSV per public table and one per table's stratigraphic relations."},
		{Path: "records", Name: "Records", Description: "Each published record as Linked Art (CIDOC CRM) JSON-LD."},
		{Path: "figures", Name: "Figures", Description: "Harris matrices and radiocarbon dates of the tables with stratigraphic relations, as SVG."},
		{Path: "iiif", Name: "Images", Description: "The published records' images as IIIF level 0 image services, with a IIIF manifest per record."},
		{Path: "geo", Name: "Geodata", Description: "The published records' geodata as GeoJSON (WGS 84)."},
	} {
		if used[d.Path] {
			ds.Directories = append(ds.Directories, d)
		}
	}
	files := make([]crate.File, len(b.files))
	for i, f := range b.files {
		files[i] = crate.File{Path: f.Path, Name: f.Name, Description: f.Description, EncodingFormat: f.Format,
			ConformsTo: f.ConformsTo, ContentSize: f.Size, SHA256: f.SHA256}
	}
	ew, err := b.entry("ro-crate-metadata.json")
	if err != nil {
		return err
	}
	return crate.WriteMetadata(ew, ds, files)
}

// packageName is a Frictionless package name (lower case, digits, "-",
// "_", ".") made from the application's name.
func packageName(app string) string {
	out := []byte{}
	for _, r := range []byte(app) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			out = append(out, r)
		case r >= 'A' && r <= 'Z':
			out = append(out, r+'a'-'A')
		default:
			out = append(out, '-')
		}
	}
	return string(out)
}

// dataciteMetadata is the dataset's DataCite description.
func (b *build) dataciteMetadata(version int64, landing string) datacite.Metadata {
	return dataciteOf(b.cfg, b.snap, version, landing, b.now, b.records)
}

// dataciteOf describes a version of the dataset for DataCite.
func dataciteOf(cfg *Config, s *Snapshot, version int64, landing string, published time.Time, records int64) datacite.Metadata {
	lic, _ := LicenceOf(cfg.Licence)
	m := datacite.Metadata{URL: landing, Titles: []string{cfg.Title}, Publisher: cfg.Publisher, PublicationYear: published.Year(),
		ResourceType: "Archaeological database", Version: strconv.FormatInt(version, 10), Language: cfg.Language,
		Rights:  []datacite.Rights{{URI: lic.URL, Identifier: lic.ID, Name: lic.Name}},
		Dates:   []datacite.Date{{Type: "Issued", Value: published.Format("2006-01-02")}},
		Formats: []string{"application/zip"}, Sizes: []string{strconv.FormatInt(records, 10) + " records"}}
	if m.Publisher == "" {
		m.Publisher = cfg.Authors[0].Name
	}
	if cfg.Description != "" {
		m.Descriptions = []string{cfg.Description}
	}
	if s.DOI != nil {
		m.DOI = *s.DOI
	}
	for _, a := range cfg.Authors {
		m.Creators = append(m.Creators, datacite.Creator{Name: a.Name, GivenName: a.GivenName, FamilyName: a.FamilyName, ORCID: a.ORCID, Affiliation: a.Affiliation})
	}
	for _, k := range cfg.Keywords {
		m.Subjects = append(m.Subjects, datacite.Subject{Term: k})
	}
	if s.Previous != nil && s.Frozen().BaseURL != "" {
		// A new version points at the one before (its DOI, once minted,
		// is related too: core/publish/doi).
		m.RelatedIdentifiers = append(m.RelatedIdentifiers, datacite.Related{Identifier: SnapshotURI(s.Frozen().BaseURL, *s.Previous),
			Type: "URL", Relation: "IsNewVersionOf"})
	}
	for _, t := range cfg.Tables {
		if t.Term != nil {
			m.Subjects = append(m.Subjects, datacite.Subject{Term: t.Term.Label, Scheme: "AAT", SchemeURI: "http://vocab.getty.edu/aat/", ValueURI: t.Term.ID})
		}
	}
	return m
}

var _ = store.Postgres
