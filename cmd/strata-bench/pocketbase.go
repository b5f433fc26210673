package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
)

// pocketbase is a PocketBase server, driven through its public Web API
// (superuser sign-in, collections, records, settings and batch), so that the
// same client measures both servers.
type pocketbase struct {
	base, table string
	hc          *http.Client
	auth        string
}

func (p *pocketbase) label() string { return "pocketbase" }

func (p *pocketbase) records() string { return p.base + "/api/collections/" + p.table + "/records" }

func (p *pocketbase) setup(ctx context.Context, email, password string) error {
	var login struct {
		Token string `json:"token"`
	}
	if err := call(ctx, p.hc, "POST", p.base+"/api/collections/_superusers/auth-with-password", "",
		map[string]any{"identity": email, "password": password}, &login); err != nil {
		return fmt.Errorf("superuser sign-in (create one with `superuser upsert EMAIL PASS`): %w", err)
	}
	p.auth = login.Token

	// The batch API is off by default.
	settings := map[string]any{"batch": map[string]any{
		"enabled": true, "maxRequests": 1000, "timeout": 120, "maxBodySize": 128 << 20,
	}}
	if err := call(ctx, p.hc, "PATCH", p.base+"/api/settings", p.auth, settings, nil); err != nil {
		return fmt.Errorf("enabling the batch API: %w", err)
	}

	// The collection: rules left null, so only superusers may use it.
	err := call(ctx, p.hc, "GET", p.base+"/api/collections/"+p.table, p.auth, nil, nil)
	var he *httpError
	switch {
	case err == nil:
		n, err := p.count(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("collection %s already holds %d records: delete it or name another with -table", p.table, n)
		}
		return nil
	case errors.As(err, &he) && he.status == http.StatusNotFound:
	default:
		return err
	}
	coll := map[string]any{
		"name": p.table,
		"type": "base",
		"fields": []map[string]any{
			{"name": "title", "type": "text"},
			{"name": "material", "type": "text"},
			{"name": "weight", "type": "number"},
			{"name": "context", "type": "text"},
		},
		"indexes": []string{fmt.Sprintf("CREATE INDEX idx_%s_material ON %s (material)", p.table, p.table)},
	}
	return call(ctx, p.hc, "POST", p.base+"/api/collections", p.auth, coll, nil)
}

func (p *pocketbase) count(ctx context.Context) (int64, error) {
	var out struct {
		TotalItems int64 `json:"totalItems"`
	}
	err := call(ctx, p.hc, "GET", p.records()+"?perPage=1&fields=id", p.auth, nil, &out)
	return out.TotalItems, err
}

type pbBatchRequest struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	Body   any    `json:"body,omitempty"`
}

func (p *pocketbase) batch(ctx context.Context, reqs []pbBatchRequest) ([]pbBatchResult, error) {
	var out []pbBatchResult
	err := call(ctx, p.hc, "POST", p.base+"/api/batch", p.auth, map[string]any{"requests": reqs}, &out)
	if err == nil && len(out) != len(reqs) {
		err = fmt.Errorf("batch: %d results for %d requests", len(out), len(reqs))
	}
	return out, err
}

type pbBatchResult struct {
	Status int `json:"status"`
	Body   struct {
		ID string `json:"id"`
	} `json:"body"`
}

func (p *pocketbase) create(ctx context.Context, rows []row) ([]string, error) {
	reqs := make([]pbBatchRequest, len(rows))
	for i, r := range rows {
		reqs[i] = pbBatchRequest{"POST", "/api/collections/" + p.table + "/records", r}
	}
	out, err := p.batch(ctx, reqs)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(out))
	for i, r := range out {
		ids[i] = r.Body.ID
	}
	return ids, nil
}

func (p *pocketbase) remove(ctx context.Context, ids []string) error {
	reqs := make([]pbBatchRequest, len(ids))
	for i, id := range ids {
		reqs[i] = pbBatchRequest{Method: "DELETE", URL: "/api/collections/" + p.table + "/records/" + id}
	}
	_, err := p.batch(ctx, reqs)
	return err
}

func (p *pocketbase) op(name string) (opFunc, bool) {
	get := func(ctx context.Context, u string) error {
		return call(ctx, p.hc, "GET", u, p.auth, nil, nil)
	}
	switch name {
	case "list-eq":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			q := url.Values{"filter": {fmt.Sprintf("material='%s'", randomMaterial(r))}, "perPage": {"30"}}
			return get(ctx, p.records()+"?"+q.Encode())
		}, true
	case "list-sort":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			return get(ctx, p.records()+"?sort=-weight&page=50&perPage=30")
		}, true
	case "list-substr":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			// ~ is PocketBase's "contains" (LIKE %x%, ASCII-case-insensitive).
			q := url.Values{"filter": {fmt.Sprintf("title~'%s'", substrTerm)}, "perPage": {"30"}}
			return get(ctx, p.records()+"?"+q.Encode())
		}, true
	case "read":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			return get(ctx, p.records()+"/"+e.randomID(r))
		}, true
	case "update":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			return call(ctx, p.hc, "PATCH", p.records()+"/"+e.randomID(r), p.auth,
				map[string]any{"weight": randomWeight(r)}, nil)
		}, true
	case "create":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			var out struct {
				ID string `json:"id"`
			}
			err := call(ctx, p.hc, "POST", p.records(), p.auth, e.gen.newRow(r), &out)
			if err == nil && e.created != nil {
				e.created.add(out.ID)
			}
			return err
		}, true
	}
	return nil, false
}
