package doi

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/publish/datacite"
)

type zenodo struct {
	base string
	c    client
}

// NewZenodo returns a Provider for Zenodo's deposition API at baseURL
// (https://zenodo.org, or https://sandbox.zenodo.org), authenticating with a
// personal access token (scopes deposit:write and deposit:actions) sent as
// a Bearer header, never in the URL. hc nil means http.DefaultClient; give
// it a timeout long enough for the upload.
func NewZenodo(baseURL, token string, hc *http.Client) Provider {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &zenodo{
		base: strings.TrimRight(baseURL, "/"),
		c: client{hc: hc, service: "Zenodo", auth: func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+token)
		}},
	}
}

func (p *zenodo) Name() string { return "zenodo" }

// deposition is the part of Zenodo's deposition resource Mint reads.
type deposition struct {
	ID        int64          `json:"id"`
	State     string         `json:"state"`
	Submitted bool           `json:"submitted"`
	DOI       string         `json:"doi"`
	Metadata  map[string]any `json:"metadata"`
	Files     []struct {
		ID       string `json:"id"`
		Filename string `json:"filename"`
		Filesize int64  `json:"filesize"`
		Checksum string `json:"checksum"`
	} `json:"files"`
	Links map[string]string `json:"links"`
}

func (p *zenodo) depURL(id int64) string {
	return p.base + "/api/deposit/depositions/" + strconv.FormatInt(id, 10)
}

func (p *zenodo) getDep(ctx context.Context, id int64) (deposition, error) {
	var d deposition
	_, err := p.c.do(ctx, http.MethodGet, p.depURL(id), "", nil, -1, &d)
	return d, err
}

func (p *zenodo) postJSON(ctx context.Context, u string, v any, out any) error {
	body, n, err := jsonBody(v)
	if err != nil {
		return err
	}
	_, err = p.c.do(ctx, http.MethodPost, u, "application/json", body, n, out)
	return err
}

// Mint creates (or, for a new version, obtains) a draft deposition, uploads
// the files, sets the metadata and publishes; see the package doc for the
// guarantee against duplicates.
func (p *zenodo) Mint(ctx context.Context, req Request, st State, save func(State) error) (Result, error) {
	if err := checkResume(p.Name(), req, st); err != nil {
		return Result{}, err
	}
	if req.Previous != nil && req.Previous.DepositionID == 0 {
		return Result{}, errs.New(errs.Invalid, CodeInvalid, "previous version has no Zenodo deposition")
	}
	if len(req.Files) == 0 {
		return Result{}, errs.New(errs.Invalid, CodeInvalid, "Zenodo needs at least one file")
	}
	seen := map[string]bool{}
	for _, f := range req.Files {
		if f.Name == "" || strings.ContainsAny(f.Name, "/\\") || f.Open == nil || seen[f.Name] {
			return Result{}, errs.Newf(errs.Invalid, CodeInvalid, "bad or duplicate file %q", f.Name)
		}
		seen[f.Name] = true
	}
	md := req.Metadata
	md.DOI = ""
	if err := md.Validate(); err != nil {
		return Result{}, errs.New(errs.Invalid, CodeInvalid, "metadata is not valid").Wrap(err)
	}
	st.Provider, st.Key = p.Name(), req.Key
	step := func(name string) error {
		st.Step = name
		return save(st)
	}
	marker := Marker(req.Key)

	if st.Step == "" {
		// Saved before the request: a retry from here knows a deposition
		// may exist although no answer came back.
		if err := step("creating"); err != nil {
			return Result{}, err
		}
	}
	if st.Step == "creating" {
		d, err := p.create(ctx, req, marker)
		if err != nil {
			return Result{}, err
		}
		st.DepositionID, st.Bucket = d.ID, d.Links["bucket"]
		if st.Bucket == "" {
			return Result{}, errs.New(errs.BadGateway, CodeRejected, "Zenodo's deposition has no bucket link")
		}
		if err := step("created"); err != nil {
			return Result{}, err
		}
	}
	if st.Step == "created" {
		if err := p.upload(ctx, req, &st, save); err != nil {
			return Result{}, err
		}
		if err := step("uploaded"); err != nil {
			return Result{}, err
		}
	}
	if st.Step == "uploaded" {
		body := map[string]any{"metadata": zenodoMetadata(md, marker)}
		if err := p.putJSON(ctx, p.depURL(st.DepositionID), body); err != nil {
			return Result{}, err
		}
		if err := step("publishing"); err != nil {
			return Result{}, err
		}
	}
	if st.Step == "publishing" {
		d, err := p.getDep(ctx, st.DepositionID)
		if err != nil {
			return Result{}, err
		}
		if !d.Submitted {
			d = deposition{}
			if err := p.postJSON(ctx, p.depURL(st.DepositionID)+"/actions/publish", map[string]any{}, &d); err != nil {
				return Result{}, err
			}
		}
		if d.DOI == "" {
			return Result{}, errs.New(errs.BadGateway, CodeRejected, "Zenodo published the deposition without a DOI")
		}
		st.DOI, st.URL = d.DOI, resolverURL(d.DOI)
		if err := step("done"); err != nil {
			return Result{}, err
		}
	}
	if st.Step != "done" {
		return Result{}, errs.Newf(errs.Conflict, CodeMismatch, "unknown Zenodo step %q", st.Step)
	}
	return Result{DOI: st.DOI, URL: st.URL}, nil
}

// create returns the draft for this request: for a new version, Zenodo's
// newversion action (which returns the existing draft while one is
// unpublished); otherwise a draft found by its marker, or a new one.
func (p *zenodo) create(ctx context.Context, req Request, marker string) (deposition, error) {
	if req.Previous != nil {
		var orig deposition
		if err := p.postJSON(ctx, p.depURL(req.Previous.DepositionID)+"/actions/newversion", map[string]any{}, &orig); err != nil {
			return deposition{}, err
		}
		draft := orig.Links["latest_draft"]
		if draft == "" {
			return deposition{}, errs.New(errs.BadGateway, CodeRejected, "Zenodo's newversion answer has no latest_draft link")
		}
		var d deposition
		if _, err := p.c.do(ctx, http.MethodGet, draft, "", nil, -1, &d); err != nil {
			return deposition{}, err
		}
		return d, nil
	}
	if d, ok, err := p.findDraft(ctx, marker); err != nil || ok {
		return d, err
	}
	var d deposition
	err := p.postJSON(ctx, p.base+"/api/deposit/depositions", map[string]any{
		"metadata": map[string]any{"upload_type": "dataset", "notes": markerNote(marker)},
	}, &d)
	return d, err
}

func markerNote(marker string) string {
	return "Published with Strata (" + marker + ")."
}

// findDraft looks for the user's unpublished deposition whose notes carry
// marker: first with a search query, then, since the notes may not be
// searchable, by listing drafts newest first (at most 1000).
func (p *zenodo) findDraft(ctx context.Context, marker string) (deposition, bool, error) {
	queries := []url.Values{
		{"q": {`"` + marker + `"`}, "status": {"draft"}, "sort": {"mostrecent"}, "size": {"100"}},
	}
	for page := 1; page <= 10; page++ {
		queries = append(queries, url.Values{"status": {"draft"}, "sort": {"mostrecent"}, "size": {"100"}, "page": {strconv.Itoa(page)}})
	}
	for _, q := range queries {
		var list []deposition
		if _, err := p.c.do(ctx, http.MethodGet, p.base+"/api/deposit/depositions?"+q.Encode(), "", nil, -1, &list); err != nil {
			return deposition{}, false, err
		}
		for _, d := range list {
			if notes, _ := d.Metadata["notes"].(string); !d.Submitted && strings.Contains(notes, marker) {
				if d.Links["bucket"] == "" { // list entries may omit links
					full, err := p.getDep(ctx, d.ID)
					if err != nil {
						return deposition{}, false, err
					}
					d = full
				}
				return d, true, nil
			}
		}
		if q.Get("q") == "" && len(list) < 100 {
			break
		}
	}
	return deposition{}, false, nil
}

// upload removes files the draft holds that are not in the request (a new
// version starts with the previous version's files), then PUTs each file
// not yet confirmed into the bucket, checking the MD5 Zenodo reports
// against the one computed while streaming.
func (p *zenodo) upload(ctx context.Context, req Request, st *State, save func(State) error) error {
	d, err := p.getDep(ctx, st.DepositionID)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, f := range req.Files {
		want[f.Name] = true
	}
	for _, f := range d.Files {
		if want[f.Filename] {
			continue
		}
		code, err := p.c.do(ctx, http.MethodDelete, p.depURL(st.DepositionID)+"/files/"+url.PathEscape(f.ID), "", nil, -1, nil)
		if err != nil && code != http.StatusNotFound {
			return err
		}
	}
	for _, f := range req.Files {
		if st.Uploaded[f.Name] != "" {
			continue
		}
		sum, err := p.put1(ctx, st.Bucket, f)
		if err != nil {
			return err
		}
		// A fresh map: the caller may keep the State it saved before.
		up := make(map[string]string, len(st.Uploaded)+1)
		for k, v := range st.Uploaded {
			up[k] = v
		}
		up[f.Name] = sum
		st.Uploaded = up
		if err := save(*st); err != nil {
			return err
		}
	}
	return nil
}

func (p *zenodo) put1(ctx context.Context, bucket string, f File) (string, error) {
	rc, err := f.Open()
	if err != nil {
		return "", errs.Newf(errs.Internal, CodeInvalid, "cannot open %s", f.Name).Wrap(err)
	}
	defer rc.Close()
	h := md5.New()
	var out struct {
		Key      string `json:"key"`
		Size     int64  `json:"size"`
		Checksum string `json:"checksum"`
	}
	body := io.TeeReader(io.LimitReader(rc, f.Size+1), h)
	if _, err := p.c.do(ctx, http.MethodPut, bucket+"/"+url.PathEscape(f.Name), "application/octet-stream", body, f.Size, &out); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if out.Checksum != "md5:"+sum || out.Size != f.Size {
		return "", errs.Newf(errs.BadGateway, CodeUnavail, "Zenodo stored %s with %s (%d bytes), sent md5:%s (%d bytes)",
			f.Name, out.Checksum, out.Size, sum, f.Size)
	}
	return sum, nil
}

func (p *zenodo) putJSON(ctx context.Context, u string, v any) error {
	body, n, err := jsonBody(v)
	if err != nil {
		return err
	}
	_, err = p.c.do(ctx, http.MethodPut, u, "application/json", body, n, nil)
	return err
}

// versionRelations are left to Zenodo, which links the versions of one
// concept itself.
var versionRelations = map[string]bool{"IsNewVersionOf": true, "IsPreviousVersionOf": true, "IsVersionOf": true, "HasVersion": true}

// zenodoMetadata maps DataCite metadata onto Zenodo's deposition metadata.
func zenodoMetadata(m datacite.Metadata, marker string) map[string]any {
	date := fmt.Sprintf("%04d-01-01", m.PublicationYear)
	for _, d := range m.Dates {
		if d.Type == "Issued" && len(d.Value) >= 10 {
			date = d.Value[:10]
			break
		}
	}
	var creators []any
	for _, c := range m.Creators {
		o := map[string]any{"name": c.Name}
		if c.Affiliation != "" {
			o["affiliation"] = c.Affiliation
		}
		if id, err := datacite.NormalizeORCID(c.ORCID); err == nil && c.ORCID != "" {
			o["orcid"] = strings.TrimPrefix(id, "https://orcid.org/")
		}
		creators = append(creators, o)
	}
	// Zenodo's description is HTML: escape, keep paragraphs.
	var desc []string
	for _, d := range m.Descriptions {
		desc = append(desc, "<p>"+strings.ReplaceAll(html.EscapeString(d), "\n", "<br>")+"</p>")
	}
	if len(desc) == 0 {
		desc = []string{"<p>" + html.EscapeString(m.Titles[0]) + "</p>"}
	}
	out := map[string]any{
		"upload_type":      "dataset",
		"publication_date": date,
		"title":            m.Titles[0],
		"creators":         creators,
		"description":      strings.Join(desc, ""),
		"access_right":     "open",
		"notes":            markerNote(marker),
	}
	for _, r := range m.Rights {
		if r.Identifier != "" {
			out["license"] = strings.ToLower(r.Identifier)
			break
		}
	}
	var kw []any
	for _, s := range m.Subjects {
		kw = append(kw, s.Term)
	}
	if kw != nil {
		out["keywords"] = kw
	}
	var rel []any
	for _, r := range m.RelatedIdentifiers {
		if versionRelations[r.Relation] {
			continue
		}
		rel = append(rel, map[string]any{
			"identifier": r.Identifier,
			"relation":   strings.ToLower(r.Relation[:1]) + r.Relation[1:],
		})
	}
	if rel != nil {
		out["related_identifiers"] = rel
	}
	if m.Version != "" {
		out["version"] = m.Version
	}
	// Zenodo wants ISO 639-2/3 codes; a two-letter tag is left out rather
	// than guessed.
	if len(m.Language) == 3 {
		out["language"] = strings.ToLower(m.Language)
	}
	return out
}
