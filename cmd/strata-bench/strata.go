package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
)

// strata is a Strata server: the routes of docs/api.md.
type strata struct {
	base, app, table string
	hc               *http.Client
	auth             string
	engine           string
}

func (s *strata) label() string { return "strata/" + s.engine }

func (s *strata) api(path string) string { return s.base + "/" + s.app + "/api" + path }

func (s *strata) setup(ctx context.Context, email, password string) error {
	var info struct {
		Engine string `json:"engine"`
	}
	if err := call(ctx, s.hc, "GET", s.base+"/api/info", "", nil, &info); err != nil {
		return err
	}
	s.engine = info.Engine

	// Create the application, or use the one that exists.
	err := call(ctx, s.hc, "POST", s.base+"/api/new-app", "",
		map[string]any{"name": s.app, "email": email, "password": password}, nil)
	var he *httpError
	if err != nil && !(errors.As(err, &he) && he.status == http.StatusConflict) {
		return err
	}
	var login struct {
		Token string `json:"token"`
	}
	if err := call(ctx, s.hc, "POST", s.api("/auth/login"), "",
		map[string]any{"email": email, "password": password}, &login); err != nil {
		return err
	}
	s.auth = "Bearer " + login.Token

	// The table, its fields and the index on material.
	err = call(ctx, s.hc, "POST", s.api("/config/tables"), s.auth, map[string]any{"name": s.table}, nil)
	if err != nil {
		if !(errors.As(err, &he) && he.status == http.StatusConflict) {
			return err
		}
		n, err := s.count(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("table %s already holds %d rows: drop it or name another with -table", s.table, n)
		}
	}
	fields := []map[string]any{
		{"name": "title", "type": "text"},
		{"name": "material", "type": "text"},
		{"name": "weight", "type": "float"},
		{"name": "context", "type": "text"},
	}
	for _, f := range fields {
		err := call(ctx, s.hc, "POST", s.api("/config/table/"+s.table+"/field"), s.auth, f, nil)
		if err != nil && !(errors.As(err, &he) && he.status == http.StatusConflict) {
			return err
		}
	}
	err = call(ctx, s.hc, "POST", s.api("/config/table/"+s.table+"/indexes"), s.auth,
		map[string]any{"name": "ix_" + s.table + "_material", "columns": []string{"material"}}, nil)
	if err != nil && !(errors.As(err, &he) && he.status == http.StatusConflict) {
		return err
	}
	return nil
}

func (s *strata) count(ctx context.Context) (int64, error) {
	var out struct {
		Total int64 `json:"total"`
	}
	err := call(ctx, s.hc, "GET", s.api("/records/"+s.table+"?ids_only=1&per_page=1"), s.auth, nil, &out)
	return out.Total, err
}

type strataBatchAnswer struct {
	Results []struct {
		ID json.RawMessage `json:"id"`
	} `json:"results"`
}

func (s *strata) create(ctx context.Context, rows []row) ([]string, error) {
	var out strataBatchAnswer
	body := map[string]any{"create": map[string]any{s.table: rows}}
	if err := call(ctx, s.hc, "POST", s.api("/batch"), s.auth, body, &out); err != nil {
		return nil, err
	}
	if len(out.Results) != len(rows) {
		return nil, fmt.Errorf("batch: %d results for %d rows", len(out.Results), len(rows))
	}
	ids := make([]string, len(rows))
	for i, r := range out.Results {
		ids[i] = idString(r.ID)
	}
	return ids, nil
}

func (s *strata) remove(ctx context.Context, ids []string) error {
	reqs := make([]map[string]any, len(ids))
	for i, id := range ids {
		reqs[i] = map[string]any{"method": "DELETE", "url": "/record/" + s.table + "/" + id}
	}
	return call(ctx, s.hc, "POST", s.api("/batch"), s.auth, map[string]any{"requests": reqs}, nil)
}

func (s *strata) op(name string) (opFunc, bool) {
	get := func(ctx context.Context, u string) error {
		return call(ctx, s.hc, "GET", u, s.auth, nil, nil)
	}
	records := s.api("/records/" + s.table)
	switch name {
	case "list-eq":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			q := url.Values{"filter[material][_eq]": {randomMaterial(r)}, "per_page": {"30"}}
			return get(ctx, records+"?"+q.Encode())
		}, true
	case "list-sort":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			return get(ctx, records+"?sort_field=weight&sort_dir=desc&page=50&per_page=30")
		}, true
	case "list-substr":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			q := url.Values{"filter[title][_icontains]": {substrTerm}, "per_page": {"30"}}
			return get(ctx, records+"?"+q.Encode())
		}, true
	case "read":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			return get(ctx, s.api("/record/"+s.table+"/"+e.randomID(r)))
		}, true
	case "update":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			return call(ctx, s.hc, "POST", s.api("/record/"+s.table+"/"+e.randomID(r)), s.auth,
				map[string]any{"core": map[string]any{"weight": randomWeight(r)}}, nil)
		}, true
	case "create":
		return func(ctx context.Context, e opEnv, r *rand.Rand) error {
			var out struct {
				ID json.RawMessage `json:"id"`
			}
			err := call(ctx, s.hc, "POST", s.api("/record/"+s.table), s.auth,
				map[string]any{"core": e.gen.newRow(r)}, &out)
			if err == nil && e.created != nil {
				e.created.add(idString(out.ID))
			}
			return err
		}, true
	}
	return nil, false
}
