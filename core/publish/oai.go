package publish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/publish/datacite"
	"github.com/strata-archaeo/strata/core/publish/oaipmh"
)

// OAI-PMH over what the latest version published: one item per
// published record (and per record a later version withdrew, as
// deleted), its identifier the record's URI, a set per table, in
// oai_dc and DataCite. The items and their datestamps come from
// sys_publish_items, so a harvester's from= picks up exactly the records
// whose published content changed.

// FormatDataCite is the DataCite kernel-4 resource as an OAI-PMH format.
var FormatDataCite = oaipmh.Format{Prefix: "datacite", Schema: "http://schema.datacite.org/meta/kernel-4/metadata.xsd",
	Namespace: "http://datacite.org/schema/kernel-4"}

// oaiPageSize is the records per ListRecords page.
const oaiPageSize = 100

// GET|POST /<app>/oai — the OAI-PMH 2.0 endpoint.
func (h handlers) oai(c *gin.Context) {
	app := api.AppOf(c)
	s, ok := latestOf(c)
	if !ok {
		return
	}
	key, err := app.JWTSecret(c.Request.Context())
	if err != nil {
		api.Fail(c, err)
		return
	}
	// Tokens are signed with a key of the application's own, so one
	// cannot be forged nor carried to another application.
	tk := sha256.Sum256(append([]byte("publish:oai:"), key...))
	repo := &oaiRepo{app: app, snap: s, fr: s.Frozen()}
	oaipmh.Handler(repo, oaipmh.Options{PageSize: oaiPageSize, Now: h.d.now, TokenKey: tk[:]}).ServeHTTP(c.Writer, c.Request)
}

type oaiRepo struct {
	app  *apps.App
	snap *Snapshot
	fr   Frozen
}

func (r *oaiRepo) Identify(ctx context.Context) (oaipmh.Identity, error) {
	earliest := *r.snap.PublishedAt
	var first sql.NullInt64
	if err := r.app.DB.QueryRow(ctx, `SELECT MIN(datestamp) FROM `+r.app.DB.Sys("publish_items")+` WHERE snapshot = ?`, r.snap.ID).Scan(&first); err != nil {
		return oaipmh.Identity{}, err
	}
	if first.Valid {
		earliest = time.UnixMilli(first.Int64).UTC()
	}
	return oaipmh.Identity{RepositoryName: r.fr.Config.Title, BaseURL: r.fr.BaseURL + "/oai", AdminEmails: []string{r.fr.Config.Contact},
		EarliestDatestamp: earliest, DeletedRecord: oaipmh.DeletedPersistent}, nil
}

func (r *oaiRepo) Sets(ctx context.Context) ([]oaipmh.Set, error) {
	sets := []oaipmh.Set{{Spec: "table", Name: "Tables"}}
	for _, t := range r.fr.Config.Tables {
		sets = append(sets, oaipmh.Set{Spec: "table:" + t.Name, Name: t.Name})
	}
	return sets, nil
}

func (r *oaiRepo) Formats() []oaipmh.Format { return []oaipmh.Format{oaipmh.FormatDC, FormatDataCite} }

// position is an item's place in the order (datestamp, tb, rid).
func position(ds int64, tb string, rid int64) string {
	return strconv.FormatInt(ds, 10) + "/" + tb + "/" + strconv.FormatInt(rid, 10)
}

func parsePosition(p string) (ds int64, tb string, rid int64, err error) {
	parts := strings.Split(p, "/")
	if len(parts) != 3 {
		return 0, "", 0, errors.New("bad position")
	}
	if ds, err = strconv.ParseInt(parts[0], 10, 64); err != nil {
		return
	}
	rid, err = strconv.ParseInt(parts[2], 10, 64)
	return ds, parts[1], rid, err
}

func (r *oaiRepo) List(ctx context.Context, q oaipmh.Query) ([]oaipmh.Item, bool, error) {
	db := r.app.DB
	where := []string{"snapshot = ?"}
	args := []any{r.snap.ID}
	if q.Set != "" && q.Set != "table" {
		where = append(where, "tb = ?")
		args = append(args, strings.TrimPrefix(q.Set, "table:"))
	}
	if !q.From.IsZero() {
		where = append(where, "datestamp >= ?")
		args = append(args, q.From.UnixMilli())
	}
	if !q.Until.IsZero() {
		where = append(where, "datestamp < ?")
		args = append(args, q.Until.Add(time.Second).UnixMilli())
	}
	if q.After != "" {
		ds, tb, rid, err := parsePosition(q.After)
		if err != nil {
			return nil, false, err
		}
		where = append(where, "(datestamp > ? OR (datestamp = ? AND (tb > ? OR (tb = ? AND rid > ?))))")
		args = append(args, ds, ds, tb, tb, rid)
	}
	rows, err := db.Query(ctx, `SELECT tb, rid, datestamp, deleted, summary FROM `+db.Sys("publish_items")+` WHERE `+strings.Join(where, " AND ")+
		` ORDER BY datestamp, tb, rid LIMIT ?`, append(args, q.Limit+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("publish: oai list: %w", err)
	}
	defer rows.Close()
	var out []oaipmh.Item
	for rows.Next() {
		it, err := r.scanItem(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	more := len(out) > q.Limit
	if more {
		out = out[:q.Limit]
	}
	return out, more, nil
}

func (r *oaiRepo) scanItem(row interface{ Scan(...any) error }) (oaipmh.Item, error) {
	var tb, raw string
	var rid, ds int64
	var deleted bool
	if err := row.Scan(&tb, &rid, &ds, &deleted, &raw); err != nil {
		return oaipmh.Item{}, err
	}
	it := oaipmh.Item{Identifier: RecordURI(r.fr.BaseURL, tb, rid), Datestamp: time.UnixMilli(ds).UTC(), Sets: []string{"table:" + tb},
		Deleted: deleted, Position: position(ds, tb, rid)}
	if !deleted {
		var sum summary
		if err := json.Unmarshal([]byte(raw), &sum); err != nil {
			return oaipmh.Item{}, err
		}
		uri := it.Identifier
		it.Metadata = func(w io.Writer, prefix string) error { return r.metadata(w, prefix, uri, sum) }
	}
	return it, nil
}

func (r *oaiRepo) Get(ctx context.Context, identifier string) (oaipmh.Item, bool, error) {
	rest, ok := strings.CutPrefix(identifier, r.fr.BaseURL+"/data/record/")
	if !ok {
		return oaipmh.Item{}, false, nil
	}
	tb, idText, ok := strings.Cut(rest, "/")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil {
		return oaipmh.Item{}, false, nil
	}
	it, err := r.scanItem(r.app.DB.QueryRow(ctx, `SELECT tb, rid, datestamp, deleted, summary FROM `+r.app.DB.Sys("publish_items")+
		` WHERE snapshot = ? AND tb = ? AND rid = ?`, r.snap.ID, tb, id))
	if errors.Is(err, sql.ErrNoRows) {
		return oaipmh.Item{}, false, nil
	}
	return it, err == nil, err
}

// metadata writes a record's description in prefix.
func (r *oaiRepo) metadata(w io.Writer, prefix, uri string, sum summary) error {
	cfg := r.fr.Config
	lic, _ := LicenceOf(cfg.Licence)
	dataset := SnapshotURI(r.fr.BaseURL, *r.snap.Version)
	if r.snap.DOI != nil && *r.snap.DOI != "" {
		dataset = "https://doi.org/" + *r.snap.DOI
	}
	switch prefix {
	case oaipmh.FormatDC.Prefix:
		dc := oaipmh.DC{Title: []string{sum.Label}, Type: []string{"PhysicalObject", sum.Kind}, Identifier: []string{uri},
			Relation: []string{dataset}, Rights: []string{lic.URL}, Date: []string{r.snap.PublishedAt.Format("2006-01-02")},
			Publisher: []string{publisherOf(cfg)}, Language: nonEmpty(cfg.Language)}
		for _, a := range cfg.Authors {
			dc.Creator = append(dc.Creator, a.Name)
		}
		if sum.Term != nil {
			dc.Subject = append(dc.Subject, sum.Term.Label)
		}
		var desc []string
		for _, f := range sum.Fields {
			desc = append(desc, f.Label+": "+fmt.Sprint(f.Value))
		}
		if len(desc) > 0 {
			dc.Description = []string{strings.Join(desc, "; ")}
		}
		return oaipmh.WriteDC(w, dc)
	case FormatDataCite.Prefix:
		m := datacite.Metadata{URL: uri, Titles: []string{sum.Label}, Publisher: publisherOf(cfg), PublicationYear: r.snap.PublishedAt.Year(),
			ResourceType: sum.TableLabel, Language: cfg.Language, Rights: []datacite.Rights{{URI: lic.URL, Identifier: lic.ID, Name: lic.Name}},
			RelatedIdentifiers: []datacite.Related{{Identifier: dataset, Type: relatedType(dataset), Relation: "IsPartOf"}}}
		for _, a := range cfg.Authors {
			m.Creators = append(m.Creators, datacite.Creator{Name: a.Name, GivenName: a.GivenName, FamilyName: a.FamilyName, ORCID: a.ORCID, Affiliation: a.Affiliation})
		}
		if sum.Term != nil {
			m.Subjects = []datacite.Subject{{Term: sum.Term.Label, Scheme: "AAT", SchemeURI: "http://vocab.getty.edu/aat/", ValueURI: sum.Term.ID}}
		}
		x, err := m.XML()
		if err != nil {
			return err
		}
		// The metadata element holds the resource element alone.
		if i := bytes.Index(x, []byte("?>")); bytes.HasPrefix(x, []byte("<?xml")) && i > 0 {
			x = bytes.TrimSpace(x[i+2:])
		}
		_, err = w.Write(x)
		return err
	}
	return fmt.Errorf("publish: no format %q", prefix)
}

func relatedType(id string) string {
	if strings.HasPrefix(id, "https://doi.org/") {
		return "DOI"
	}
	return "URL"
}

func publisherOf(cfg Config) string {
	if cfg.Publisher != "" {
		return cfg.Publisher
	}
	return cfg.Authors[0].Name
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

var _ = url.PathEscape
