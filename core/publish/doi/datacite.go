package doi

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/publish/datacite"
)

type dataCite struct {
	base, prefix string
	c            client
}

// NewDataCite returns a Provider for the DataCite REST API at baseURL
// (https://api.datacite.org, or https://api.test.datacite.org for tests),
// authenticating as the repository (its id, e.g. "ABC.XYZ", and password)
// with HTTP basic auth, minting under prefix ("10.5072"). hc nil means
// http.DefaultClient; give it a timeout.
func NewDataCite(baseURL, repositoryID, password, prefix string, hc *http.Client) Provider {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &dataCite{
		base:   strings.TrimRight(baseURL, "/"),
		prefix: strings.TrimSuffix(prefix, "/"),
		c: client{hc: hc, service: "DataCite", auth: func(r *http.Request) {
			r.SetBasicAuth(repositoryID, password)
		}},
	}
}

func (p *dataCite) Name() string { return "datacite" }

// doiResource is the part of a JSON:API DOI document Mint reads.
type doiResource struct {
	Data struct {
		ID         string `json:"id"`
		Type       string `json:"type"`
		Attributes struct {
			DOI                string           `json:"doi"`
			State              string           `json:"state"`
			URL                string           `json:"url"`
			RelatedIdentifiers []map[string]any `json:"relatedIdentifiers"`
		} `json:"attributes"`
	} `json:"data"`
}

func (p *dataCite) doiURL(doi string) string {
	// The DOI's slash stays literal, as DataCite's own examples write it.
	pre, suf, _ := strings.Cut(doi, "/")
	return p.base + "/dois/" + url.PathEscape(pre) + "/" + url.PathEscape(suf)
}

func (p *dataCite) put(ctx context.Context, doi string, attrs map[string]any) (doiResource, error) {
	var out doiResource
	body, n, err := jsonBody(map[string]any{"data": map[string]any{"type": "dois", "attributes": attrs}})
	if err != nil {
		return out, err
	}
	_, err = p.c.do(ctx, http.MethodPut, p.doiURL(doi), "application/vnd.api+json", body, n, &out)
	return out, err
}

func (p *dataCite) get(ctx context.Context, doi string) (doiResource, error) {
	var out doiResource
	_, err := p.c.do(ctx, http.MethodGet, p.doiURL(doi), "", nil, -1, &out)
	return out, err
}

// Mint writes the DOI as a draft (PUT creates or updates: the suffix comes
// from the key, so a retry can only touch the same DOI), publishes it, then
// links the previous version back to it.
func (p *dataCite) Mint(ctx context.Context, req Request, st State, save func(State) error) (Result, error) {
	if err := checkResume(p.Name(), req, st); err != nil {
		return Result{}, err
	}
	if req.Previous != nil && req.Previous.DOI == "" {
		return Result{}, errs.New(errs.Invalid, CodeInvalid, "previous version has no DOI")
	}
	doi := p.prefix + "/" + SuffixFor(req.Key)
	if st.DOI != "" && !strings.EqualFold(st.DOI, doi) {
		return Result{}, errs.New(errs.Conflict, CodeMismatch, "state names another DOI")
	}
	st.Provider, st.Key, st.DOI, st.URL = p.Name(), req.Key, doi, resolverURL(doi)
	res := Result{DOI: doi, URL: st.URL}
	md := req.Metadata
	md.DOI = doi
	if req.Previous != nil {
		md.RelatedIdentifiers = addRelated(md.RelatedIdentifiers, datacite.Related{
			Identifier: req.Previous.DOI, Type: "DOI", Relation: "IsNewVersionOf"})
	}
	if err := md.Validate(); err != nil {
		return Result{}, errs.New(errs.Invalid, CodeInvalid, "metadata is not valid").Wrap(err)
	}
	step := func(name string) error {
		st.Step = name
		return save(st)
	}

	if st.Step == "" {
		if _, err := p.put(ctx, doi, md.Attributes()); err != nil {
			return Result{}, err
		}
		if err := step("drafted"); err != nil {
			return Result{}, err
		}
	}
	if st.Step == "drafted" {
		// A lost answer to an earlier publish leaves the DOI findable;
		// publishing again is not needed (and a findable DOI has no
		// "publish" transition).
		cur, err := p.get(ctx, doi)
		if err != nil {
			return Result{}, err
		}
		if cur.Data.Attributes.State != "findable" {
			out, err := p.put(ctx, doi, map[string]any{"event": "publish", "url": md.URL})
			if err != nil {
				return Result{}, err
			}
			if out.Data.Attributes.State != "" && out.Data.Attributes.State != "findable" {
				return Result{}, errs.Newf(errs.BadGateway, CodeRejected, "DataCite left the DOI in state %q after publish", out.Data.Attributes.State)
			}
		}
		if err := step("published"); err != nil {
			return Result{}, err
		}
	}
	if st.Step == "published" {
		if req.Previous != nil {
			if err := p.linkPrevious(ctx, req.Previous.DOI, doi); err != nil {
				return Result{}, err
			}
		}
		if err := step("done"); err != nil {
			return Result{}, err
		}
	}
	if st.Step != "done" {
		return Result{}, errs.Newf(errs.Conflict, CodeMismatch, "unknown DataCite step %q", st.Step)
	}
	return res, nil
}

// linkPrevious adds IsPreviousVersionOf newDOI to the previous record,
// keeping its other related identifiers. Idempotent.
func (p *dataCite) linkPrevious(ctx context.Context, prev, newDOI string) error {
	cur, err := p.get(ctx, prev)
	if err != nil {
		return err
	}
	rel := cur.Data.Attributes.RelatedIdentifiers
	for _, r := range rel {
		if r["relationType"] == "IsPreviousVersionOf" && strings.EqualFold(str(r["relatedIdentifier"]), newDOI) {
			return nil
		}
	}
	list := make([]any, 0, len(rel)+1)
	for _, r := range rel {
		list = append(list, r)
	}
	list = append(list, map[string]any{
		"relatedIdentifier": newDOI, "relatedIdentifierType": "DOI", "relationType": "IsPreviousVersionOf",
	})
	_, err = p.put(ctx, prev, map[string]any{"relatedIdentifiers": list})
	return err
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func addRelated(rs []datacite.Related, r datacite.Related) []datacite.Related {
	for _, x := range rs {
		if x.Relation == r.Relation && strings.EqualFold(x.Identifier, r.Identifier) {
			return rs
		}
	}
	return append(append([]datacite.Related(nil), rs...), r)
}
