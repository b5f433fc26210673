package publish

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/secrets"
	"github.com/strata-archaeo/strata/core/store"
)

// Config is an application's publication setting: what is public and how
// the dataset is described. Nothing is public until an admin lists it:
// a table not in Tables, and a field not in its table's Fields, never
// leaves the application.
type Config struct {
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Licence     string   `json:"licence"` // an SPDX id of Licences
	Authors     []Author `json:"authors"`
	Publisher   string   `json:"publisher"`
	// Contact is the e-mail address harvesters and readers write to
	// (OAI-PMH's adminEmail).
	Contact  string   `json:"contact"`
	Keywords []string `json:"keywords"`
	Language string   `json:"language"` // ISO 639-1, "" when unsaid
	Tables   []Table  `json:"tables"`
	DOI      DOI      `json:"doi"`
}

// Author is a creator of the dataset.
type Author struct {
	Name        string `json:"name"` // as it is cited: "Family, Given" or an organisation
	GivenName   string `json:"given_name,omitempty"`
	FamilyName  string `json:"family_name,omitempty"`
	ORCID       string `json:"orcid,omitempty"` // 0000-0002-1825-0097
	Affiliation string `json:"affiliation,omitempty"`
}

// Table is a public table: its public fields, the rows published (a
// filter of the filter language; none: every row), and the kind of thing
// its records are with the admin's vocabulary term for it.
type Table struct {
	Name   string          `json:"name"`
	Kind   string          `json:"kind"` // Kinds
	Term   *Term           `json:"term,omitempty"`
	Fields []string        `json:"fields"`
	Filter json.RawMessage `json:"filter,omitempty"`
	// Images publishes the raster images linked to the table's published
	// records (IIIF): off unless the admin says so, since photographs
	// may show what the fields do not.
	Images bool `json:"images,omitempty"`
	// Roles say which public fields the Linked Art documents give their
	// own place (material, dimensions) instead of a plain statement.
	Roles *Roles `json:"roles,omitempty"`
}

// Roles map public fields to Linked Art's places for them.
type Roles struct {
	// Material is a field whose value names what the thing is made of
	// (made_of).
	Material string `json:"material,omitempty"`
	// Dimensions are numeric fields that are measurements (dimension),
	// with their AAT type (height, weight…) and unit (centimetres,
	// grams…).
	Dimensions []DimensionRole `json:"dimensions,omitempty"`
}

// DimensionRole is a numeric field that is a measurement.
type DimensionRole struct {
	Field string `json:"field"`
	Type  Term   `json:"type"`
	Unit  Term   `json:"unit"`
}

// Term is a vocabulary term: a Getty AAT URI and its label.
type Term struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// DOI says whether and where snapshots get a DOI. The credential is not
// here: it is set on its own (Secret on PUT) and kept sealed.
type DOI struct {
	Provider     string `json:"provider"` // "", "datacite" or "zenodo"
	BaseURL      string `json:"base_url,omitempty"`
	RepositoryID string `json:"repository_id,omitempty"` // DataCite's repository (client) id
	Prefix       string `json:"prefix,omitempty"`        // DataCite's DOI prefix, 10.xxxx
}

// Kinds are the kinds of record a public table may hold; each becomes a
// type of its own in the Linked Art documents.
var Kinds = []string{"stratigraphic_unit", "find", "sample", "burial", "site", "other"}

// Licence is a licence a dataset may be published under.
type Licence struct {
	ID   string `json:"id"` // SPDX
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Licences are those offered; CC BY 4.0 is the default.
var Licences = []Licence{
	{"CC-BY-4.0", "Creative Commons Attribution 4.0 International", "https://creativecommons.org/licenses/by/4.0/"},
	{"CC-BY-SA-4.0", "Creative Commons Attribution Share Alike 4.0 International", "https://creativecommons.org/licenses/by-sa/4.0/"},
	{"CC0-1.0", "Creative Commons Zero v1.0 Universal", "https://creativecommons.org/publicdomain/zero/1.0/"},
	{"CC-BY-NC-4.0", "Creative Commons Attribution Non Commercial 4.0 International", "https://creativecommons.org/licenses/by-nc/4.0/"},
	{"ODbL-1.0", "Open Data Commons Open Database License v1.0", "https://opendatacommons.org/licenses/odbl/1-0/"},
}

// LicenceOf is the licence called id.
func LicenceOf(id string) (Licence, bool) {
	for _, l := range Licences {
		if strings.EqualFold(l.ID, id) {
			return l, true
		}
	}
	return Licence{}, false
}

// Errors of the settings.
var (
	ErrInvalid       = errs.New(errs.Invalid, "publish_config_invalid", "the publication settings are not valid")
	ErrNotConfigured = errs.New(errs.Conflict, "publish_not_configured", "nothing is public yet: set the publication settings first (PUT /publish/config)")
	ErrNoKeyring     = errs.New(errs.Conflict, "secrets_unavailable", "this instance has no secret key, so a DOI credential cannot be kept encrypted")
)

func invalid(field, detail string) error {
	return ErrInvalid.With("field", field).With("detail", detail)
}

var (
	orcidPattern = regexp.MustCompile(`^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$`)
	aatPattern   = regexp.MustCompile(`^http://vocab\.getty\.edu/aat/\d{6,9}$`)
	langPattern  = regexp.MustCompile(`^[a-z]{2}$`)
	mailPattern  = regexp.MustCompile(`^[^@\s<>"]+@[^@\s<>"]+\.[^@\s<>"]+$`)
	// DOI prefixes are 10.NNNN (DataCite's rule: four or more digits,
	// possibly dotted subdivisions).
	prefixPattern = regexp.MustCompile(`^10\.\d{4,9}(\.\d+)*$`)
)

// Bounds of a setting: what a form sends, with room to spare.
const (
	maxText     = 10000
	maxShort    = 500
	maxAuthors  = 200
	maxKeywords = 100
	maxFilter   = 64 << 10
)

// ValidORCID reports whether id is an ORCID iD with a valid ISO 7064
// 11,2 check digit.
func ValidORCID(id string) bool {
	if !orcidPattern.MatchString(id) {
		return false
	}
	total := 0
	digits := strings.ReplaceAll(id, "-", "")
	for _, r := range digits[:15] {
		total = (total + int(r-'0')) * 2
	}
	check := (12 - total%11) % 11
	want := byte('0' + check)
	if check == 10 {
		want = 'X'
	}
	return digits[15] == want
}

// Normalize trims what a form sends and fills the defaults (CC BY 4.0).
func (c *Config) Normalize() {
	c.Title, c.Description, c.Publisher = strings.TrimSpace(c.Title), strings.TrimSpace(c.Description), strings.TrimSpace(c.Publisher)
	c.Licence, c.Contact = strings.TrimSpace(c.Licence), strings.TrimSpace(c.Contact)
	if c.Licence == "" {
		c.Licence = "CC-BY-4.0"
	}
	if l, ok := LicenceOf(c.Licence); ok {
		c.Licence = l.ID
	}
	c.Language = strings.ToLower(strings.TrimSpace(c.Language))
	for i := range c.Authors {
		a := &c.Authors[i]
		a.Name, a.GivenName, a.FamilyName = strings.TrimSpace(a.Name), strings.TrimSpace(a.GivenName), strings.TrimSpace(a.FamilyName)
		a.ORCID = strings.ToUpper(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(a.ORCID), "https://orcid.org/"), "http://orcid.org/"))
		a.Affiliation = strings.TrimSpace(a.Affiliation)
		if a.Name == "" && a.FamilyName != "" {
			a.Name = strings.TrimSuffix(a.FamilyName+", "+a.GivenName, ", ")
		}
	}
	kw := c.Keywords[:0]
	for _, k := range c.Keywords {
		if k = strings.TrimSpace(k); k != "" && !slices.Contains(kw, k) {
			kw = append(kw, k)
		}
	}
	c.Keywords = kw
	for i := range c.Tables {
		t := &c.Tables[i]
		t.Name, t.Kind = strings.TrimSpace(t.Name), strings.TrimSpace(t.Kind)
		if t.Kind == "" {
			t.Kind = "other"
		}
		if t.Term != nil {
			t.Term.ID, t.Term.Label = strings.TrimSpace(t.Term.ID), strings.TrimSpace(t.Term.Label)
			if t.Term.ID == "" && t.Term.Label == "" {
				t.Term = nil
			}
		}
		if b := strings.TrimSpace(string(t.Filter)); b == "" || b == "null" || b == "{}" {
			t.Filter = nil
		}
	}
	c.DOI.Provider = strings.ToLower(strings.TrimSpace(c.DOI.Provider))
	if c.DOI.Provider == "none" {
		c.DOI.Provider = ""
	}
	c.DOI.BaseURL = strings.TrimRight(strings.TrimSpace(c.DOI.BaseURL), "/")
	c.DOI.RepositoryID, c.DOI.Prefix = strings.TrimSpace(c.DOI.RepositoryID), strings.TrimSpace(c.DOI.Prefix)
}

// Validate checks the setting against the application's catalog: every
// table and field exists, plugin tables only with their parent, every
// filter parses and renders against its table. A filter may name fields
// that are not public (publish only finished trenches without
// publishing the status): it decides which rows leave, not what they
// show.
func (c *Config) Validate(ctx context.Context, db *store.DB, cat *schema.Catalog) error {
	if c.Title == "" {
		return invalid("title", "a title is required")
	}
	for name, v := range map[string]string{"title": c.Title, "publisher": c.Publisher} {
		if utf8.RuneCountInString(v) > maxShort || !utf8.ValidString(v) {
			return invalid(name, fmt.Sprintf("at most %d characters", maxShort))
		}
	}
	if utf8.RuneCountInString(c.Description) > maxText || !utf8.ValidString(c.Description) {
		return invalid("description", fmt.Sprintf("at most %d characters", maxText))
	}
	if !mailPattern.MatchString(c.Contact) || len(c.Contact) > 254 {
		return invalid("contact", "an e-mail address for readers and harvesters is required")
	}
	if _, ok := LicenceOf(c.Licence); !ok {
		ids := make([]string, len(Licences))
		for i, l := range Licences {
			ids[i] = l.ID
		}
		return invalid("licence", "one of "+strings.Join(ids, ", "))
	}
	if c.Language != "" && !langPattern.MatchString(c.Language) {
		return invalid("language", "a two-letter ISO 639-1 code")
	}
	if len(c.Authors) == 0 {
		return invalid("authors", "at least one author is required (a dataset is cited by its authors)")
	}
	if len(c.Authors) > maxAuthors || len(c.Keywords) > maxKeywords {
		return invalid("authors", fmt.Sprintf("at most %d authors and %d keywords", maxAuthors, maxKeywords))
	}
	for i, a := range c.Authors {
		f := fmt.Sprintf("authors[%d]", i)
		if a.Name == "" {
			return invalid(f+".name", "a name is required")
		}
		if a.ORCID != "" && !ValidORCID(a.ORCID) {
			return invalid(f+".orcid", "not an ORCID iD (0000-0000-0000-000X with a valid check digit)")
		}
		for _, v := range []string{a.Name, a.GivenName, a.FamilyName, a.Affiliation} {
			if utf8.RuneCountInString(v) > maxShort || !utf8.ValidString(v) {
				return invalid(f, fmt.Sprintf("at most %d characters per part", maxShort))
			}
		}
	}
	for i, k := range c.Keywords {
		if utf8.RuneCountInString(k) > maxShort || !utf8.ValidString(k) {
			return invalid(fmt.Sprintf("keywords[%d]", i), fmt.Sprintf("at most %d characters", maxShort))
		}
	}
	seen := map[string]bool{}
	for i, t := range c.Tables {
		f := fmt.Sprintf("tables[%d]", i)
		st, ok := cat.Table(t.Name)
		if !ok {
			return invalid(f+".name", "no such table: "+t.Name)
		}
		if seen[t.Name] {
			return invalid(f+".name", "listed twice: "+t.Name)
		}
		seen[t.Name] = true
		if !slices.Contains(Kinds, t.Kind) {
			return invalid(f+".kind", "one of "+strings.Join(Kinds, ", "))
		}
		if t.Term != nil && (!aatPattern.MatchString(t.Term.ID) || t.Term.Label == "" || utf8.RuneCountInString(t.Term.Label) > maxShort) {
			return invalid(f+".term", "a Getty AAT URI (http://vocab.getty.edu/aat/300…) and its label")
		}
		fields := map[string]bool{}
		for j, name := range t.Fields {
			if _, ok := st.Field(name); !ok {
				return invalid(fmt.Sprintf("%s.fields[%d]", f, j), "no such field: "+name)
			}
			if fields[name] {
				return invalid(fmt.Sprintf("%s.fields[%d]", f, j), "listed twice: "+name)
			}
			fields[name] = true
		}
		if t.Roles != nil && t.Kind == "site" {
			return invalid(f+".roles", "a site has no material or dimensions: publish them as fields")
		}
		if err := t.Roles.validate(f, st, t.Fields); err != nil {
			return err
		}
		if len(t.Filter) > maxFilter {
			return invalid(f+".filter", "at most 64 KiB")
		}
		if t.Filter != nil {
			n, err := filter.ParseJSON(t.Filter)
			if err != nil {
				return ErrInvalid.With("field", f+".filter").With("detail", err.Error()).Wrap(err)
			}
			if _, _, err := filter.RenderWith(ctx, db, cat, t.Name, n, filter.Options{}); err != nil {
				return ErrInvalid.With("field", f+".filter").With("detail", err.Error()).Wrap(err)
			}
		}
	}
	for i, t := range c.Tables {
		st, _ := cat.Table(t.Name)
		if st.IsPlugin && !seen[st.PluginOf] {
			return invalid(fmt.Sprintf("tables[%d].name", i), "a plugin table is public only with its parent table "+st.PluginOf)
		}
	}
	switch c.DOI.Provider {
	case "":
	case "datacite", "zenodo":
		u, err := url.Parse(c.DOI.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return invalid("doi.base_url", "the provider's API address, https://…")
		}
		if c.DOI.Provider == "datacite" {
			if c.DOI.RepositoryID == "" {
				return invalid("doi.repository_id", "DataCite's repository id is required")
			}
			if !prefixPattern.MatchString(c.DOI.Prefix) {
				return invalid("doi.prefix", "a DOI prefix, 10.NNNN")
			}
		}
	default:
		return invalid("doi.provider", "none, datacite or zenodo")
	}
	return nil
}

// validate checks the roles of a table's setting: public fields, a
// dimension numeric, its type and unit AAT terms.
func (r *Roles) validate(f string, t *schema.Table, public []string) error {
	if r == nil {
		return nil
	}
	if r.Material != "" && !slices.Contains(public, r.Material) {
		return invalid(f+".roles.material", "a public field of the table")
	}
	if len(r.Dimensions) > 50 {
		return invalid(f+".roles.dimensions", "at most 50")
	}
	for i, d := range r.Dimensions {
		g := fmt.Sprintf("%s.roles.dimensions[%d]", f, i)
		fd, ok := t.Field(d.Field)
		if !ok || !slices.Contains(public, d.Field) {
			return invalid(g+".field", "a public field of the table")
		}
		if fd.DBType != schema.DBInt && fd.DBType != schema.DBFloat {
			return invalid(g+".field", "a numeric field")
		}
		for name, term := range map[string]Term{"type": d.Type, "unit": d.Unit} {
			if !aatPattern.MatchString(term.ID) || term.Label == "" || utf8.RuneCountInString(term.Label) > maxShort {
				return invalid(g+"."+name, "a Getty AAT URI and its label")
			}
		}
	}
	return nil
}

// TableConfig is the setting of table (nil: not public).
func (c *Config) TableConfig(name string) *Table {
	for i := range c.Tables {
		if c.Tables[i].Name == name {
			return &c.Tables[i]
		}
	}
	return nil
}

// Stored is the setting as kept: the JSON and whether a DOI credential
// is set.
type Stored struct {
	Config    Config
	SecretSet bool
	UpdatedAt time.Time
}

// LoadConfig reads the application's setting (ok false: never saved).
func LoadConfig(ctx context.Context, db *store.DB) (st Stored, ok bool, err error) {
	var raw string
	var secret sql.NullString
	var at int64
	err = db.QueryRow(ctx, `SELECT config, doi_secret, updated_at FROM `+db.Sys("publish")+` WHERE id = 1`).Scan(&raw, &secret, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Stored{}, false, nil
	}
	if err != nil {
		return Stored{}, false, fmt.Errorf("publish: read settings: %w", err)
	}
	if err := json.Unmarshal([]byte(raw), &st.Config); err != nil {
		return Stored{}, false, fmt.Errorf("publish: stored settings: %w", err)
	}
	st.SecretSet = secret.Valid && secret.String != ""
	st.UpdatedAt = time.UnixMilli(at).UTC()
	return st, true, nil
}

// secretPlace binds a sealed DOI credential to its application, so that
// a row copied into another application's database does not open.
func secretPlace(app string) string { return "publish:doi:" + app }

// SaveConfig stores cfg; secret, when not nil, replaces the DOI
// credential (an empty string removes it), sealed with keys.
func SaveConfig(ctx context.Context, db *store.DB, keys *secrets.Keyring, app string, cfg Config, secret *string, user int64, now time.Time) error {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	var sealed *string
	if secret != nil && *secret != "" {
		if keys == nil {
			return ErrNoKeyring
		}
		s, err := keys.Seal(*secret, secretPlace(app))
		if err != nil {
			return fmt.Errorf("publish: seal credential: %w", err)
		}
		sealed = &s
	}
	return db.Tx(ctx, func(tx *store.DB) error {
		res, err := tx.Exec(ctx, `UPDATE `+tx.Sys("publish")+` SET config = ?, updated_at = ?, updated_by = ? WHERE id = 1`, string(raw), now.UnixMilli(), user)
		if err != nil {
			return fmt.Errorf("publish: save settings: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("publish")+` (id, config, updated_at, updated_by) VALUES (1, ?, ?, ?)`, string(raw), now.UnixMilli(), user); err != nil {
				return fmt.Errorf("publish: save settings: %w", err)
			}
		}
		if secret != nil {
			if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("publish")+` SET doi_secret = ? WHERE id = 1`, sealed); err != nil {
				return fmt.Errorf("publish: save credential: %w", err)
			}
		}
		return nil
	})
}

// loadSecret opens the DOI credential ("" when none is set).
func loadSecret(ctx context.Context, db *store.DB, keys *secrets.Keyring, app string) (string, error) {
	var sealed sql.NullString
	err := db.QueryRow(ctx, `SELECT doi_secret FROM `+db.Sys("publish")+` WHERE id = 1`).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) || !sealed.Valid || sealed.String == "" {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if keys == nil {
		return "", ErrNoKeyring
	}
	return keys.Open(sealed.String, secretPlace(app))
}
