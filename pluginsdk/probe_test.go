package pluginsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/strata-archaeo/strata/pluginsdk"
)

// probe is a plugin that exercises every part of the SDK: the tests call
// it in-process through plugintest and as a real process through Serve.
type probe struct {
	mu         sync.Mutex
	host       pluginsdk.Host
	settings   json.RawMessage
	afterSaves []pluginsdk.SaveCall
}

func (p *probe) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{
		Name:    "probe",
		Version: "0.1.0",
		Features: []pluginsdk.Feature{{
			Name:    "notes",
			Aliases: []string{"probe-notes"},
			Columns: []pluginsdk.Column{
				{Name: "note", Type: "text", DBType: "text"},
				{Name: "note_len", Type: "text", DBType: "int", Readonly: true},
			},
			Computed:   []string{"note_len"},
			BeforeSave: true,
			AfterSave:  true,
			Required:   true,
			DependsOn:  []string{"site"},
		}, {
			Name:       "samples",
			Child:      &pluginsdk.ChildTable{Suffix: "samples", Columns: []pluginsdk.Column{{Name: "code", Type: "text", DBType: "text"}}},
			BeforeSave: true,
		}},
		Routes: []pluginsdk.Route{
			{Method: "GET", Path: "/probe/echo/:id", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(echo)},
			{Method: "POST", Path: "/probe/echo/:id", Access: pluginsdk.AccessEdit, Handler: http.HandlerFunc(echo)},
			{Method: "GET", Path: "/probe/plain", Access: pluginsdk.AccessPublic, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "hello")
			})},
			{Method: "GET", Path: "/probe/panic", Access: pluginsdk.AccessPublic, Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				panic("route boom")
			})},
			{Method: "POST", Path: "/probe/host", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(p.useHost)},
		},
		Operators: []pluginsdk.Operator{
			{Name: "_probe_ids", Feature: "notes", Fields: []string{"note"}},
			{Name: "_probe_both"},
			{Name: "_probe_plain"},
		},
		Sections:     []pluginsdk.Section{{Name: "probe_section", Feature: "notes"}},
		SystemTables: []pluginsdk.SystemTable{{Name: "state", Columns: []pluginsdk.Column{{Name: "k", Type: "text", DBType: "text"}, {Name: "v", Type: "text", DBType: "text"}}}},
	}
}

func (p *probe) Configure(_ context.Context, host pluginsdk.Host, settings json.RawMessage) error {
	var s struct{ Refuse bool }
	if len(settings) > 0 {
		if err := json.Unmarshal(settings, &s); err != nil {
			return err
		}
	}
	if s.Refuse {
		return pluginsdk.Errorf("bad_settings", "refused as asked")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host, p.settings = host, settings
	return nil
}

// state reads what Configure and AfterSave recorded (under the lock: they
// ran on gRPC goroutines).
func (p *probe) state() (json.RawMessage, []pluginsdk.SaveCall) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.settings, p.afterSaves
}

// echo answers with everything it was given.
func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Echo", "yes")
	w.Header().Add("X-Multi", "a")
	w.Header().Add("X-Multi", "b")
	pluginsdk.WriteJSON(w, http.StatusCreated, map[string]any{
		"method": r.Method, "path": r.URL.Path, "query": r.URL.Query().Get("q"), "uri": r.RequestURI,
		"header": r.Header.Get("X-Test"), "auth": r.Header.Get("Authorization"), "body": string(body),
		"length": r.ContentLength, "actor": pluginsdk.ActorFrom(r), "id": pluginsdk.Param(r, "id"),
		"path_value": r.PathValue("id"), "deadline": hasDeadline(r),
	})
}

func hasDeadline(r *http.Request) bool {
	_, ok := r.Context().Deadline()
	return ok
}

// useHost makes one call of each Host method and reports the results.
func (p *probe) useHost(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	host := p.host
	p.mu.Unlock()
	if host == nil {
		pluginsdk.WriteError(w, http.StatusServiceUnavailable, "not_configured", "Configure was not called")
		return
	}
	ctx, actor := r.Context(), pluginsdk.ActorFrom(r)
	fail := func(err error) { pluginsdk.WriteError(w, http.StatusBadGateway, "host_failed", err.Error()) }
	rows, total, err := host.QueryRecords(ctx, pluginsdk.QueryRecordsInput{App: actor.App, Table: "finds",
		Filter: map[string]any{"kind": map[string]any{"_eq": "pot"}}, Columns: []string{"kind"}, Limit: 1, SortField: "id", SortDir: "desc", Actor: &actor})
	if err != nil {
		fail(err)
		return
	}
	ids, err := host.WriteSystemRows(ctx, pluginsdk.SystemWriteInput{App: actor.App, Table: "state", Upsert: []map[string]any{{"k": "last", "v": "x"}}})
	if err != nil {
		fail(err)
		return
	}
	state, err := host.ReadSystemRows(ctx, pluginsdk.SystemReadInput{App: actor.App, Table: "state", Filter: map[string]any{"k": map[string]any{"_eq": "last"}}})
	if err != nil {
		fail(err)
		return
	}
	_, undeclared := host.ReadSystemRows(ctx, pluginsdk.SystemReadInput{App: actor.App, Table: "nope"})
	settings, err := host.AppSettings(ctx, actor.App)
	if err != nil {
		fail(err)
		return
	}
	if err := host.Log(ctx, pluginsdk.LogInfo, "probe used the host", map[string]string{"app": actor.App}); err != nil {
		fail(err)
		return
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"rows": rows, "total": total, "ids": ids, "state": state,
		"settings": settings, "undeclared_refused": undeclared != nil})
}

func (p *probe) BeforeSave(_ context.Context, call pluginsdk.SaveCall) ([]pluginsdk.RowResult, error) {
	if call.RowTable != call.Table {
		return nil, nil // child rows: accepted as sent
	}
	out := make([]pluginsdk.RowResult, len(call.Rows))
	for i, row := range call.Rows {
		note, _ := row.Values["note"].(string)
		switch note {
		case "panic":
			panic("hook boom")
		case "refuse":
			return nil, pluginsdk.Errorf("refused", "the probe refuses")
		case "short":
			return out[:i], nil
		case "bad":
			out[i].Errors = []pluginsdk.FieldError{{Field: "note", Rule: "bad", Message: "bad note", Path: "x[0]"}}
		}
		out[i].Values = row.Values
		row.Values["note_len"] = len(note)
	}
	return out, nil
}

func (p *probe) AfterSave(_ context.Context, call pluginsdk.SaveCall) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.afterSaves = append(p.afterSaves, call)
	if len(call.Rows) > 0 && call.Rows[0].Values["note"] == "fail" {
		return errors.New("after save failed")
	}
	return nil
}

func (p *probe) ResolveFilter(_ context.Context, call pluginsdk.FilterCall) (pluginsdk.FilterResult, error) {
	switch call.Operator {
	case "_probe_ids":
		var ids []int64
		if err := json.Unmarshal(call.Value, &ids); err != nil {
			return pluginsdk.FilterResult{}, pluginsdk.Errorf("invalid_filter", "a list of ids")
		}
		return pluginsdk.FilterResult{UseIDs: true, IDs: ids}, nil
	case "_probe_both":
		return pluginsdk.FilterResult{UseIDs: true, Filter: map[string]any{}}, nil
	}
	return pluginsdk.FilterResult{}, errors.New("plain failure")
}

func (p *probe) EnrichRecords(_ context.Context, call pluginsdk.EnrichCall) (map[int64]any, error) {
	out := map[int64]any{}
	for _, id := range call.IDs {
		out[id] = map[string]any{"id": id, "table": call.Table, "app": call.Actor.App}
	}
	return out, nil
}
