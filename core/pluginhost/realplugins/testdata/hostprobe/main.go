// Command hostprobe is the plugin the real-plugin tests call the Host
// through with pluginsdk, as a chronology model plugin would: it reads a
// table's stratigraphy (Host.Stratigraphy) and the rows of a feature
// attached to records (Host.FeatureRows), as the route's caller or, with
// "as_plugin", on its own behalf, and answers them as JSON (a failed Host
// call through pluginsdk.WriteHostError, so the tests see its code).
package main

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/strata-archaeo/strata/pluginsdk"
)

func main() { pluginsdk.Serve(&probe{}) }

type probe struct {
	mu   sync.Mutex
	host pluginsdk.Host
}

func (p *probe) Configure(_ context.Context, host pluginsdk.Host, _ json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host = host
	return nil
}

// Host is the Host Configure gave.
func (p *probe) Host() pluginsdk.Host {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.host
}

// call is the body of both routes.
type call struct {
	Table    string          `json:"table"`
	Filter   json.RawMessage `json:"filter"`
	Feature  string          `json:"feature"`
	IDs      []int64         `json:"ids"`
	AsPlugin bool            `json:"as_plugin"`
}

func (p *probe) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{Name: "hostprobe", Version: "1.0.0", Description: "calls the Host's stratigraphy and feature rows",
		Routes: []pluginsdk.Route{
			{Method: "POST", Path: "/hostprobe/matrix", Access: pluginsdk.AccessRead, Handler: p.handle(func(r *http.Request, c call, actor *pluginsdk.Actor) (any, error) {
				var filter any
				if len(c.Filter) > 0 {
					filter = c.Filter
				}
				return p.Host().Stratigraphy(r.Context(), pluginsdk.StratigraphyInput{App: pluginsdk.ActorFrom(r).App, Table: c.Table, Filter: filter, Actor: actor})
			})},
			{Method: "POST", Path: "/hostprobe/rows", Access: pluginsdk.AccessRead, Handler: p.handle(func(r *http.Request, c call, actor *pluginsdk.Actor) (any, error) {
				return p.Host().FeatureRows(r.Context(), pluginsdk.FeatureRowsInput{App: pluginsdk.ActorFrom(r).App, Table: c.Table, Feature: c.Feature,
					RecordIDs: c.IDs, Actor: actor})
			})},
		}}
}

func (p *probe) handle(f func(*http.Request, call, *pluginsdk.Actor) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c call
		if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
			pluginsdk.WriteError(w, http.StatusBadRequest, "bad_body", err.Error())
			return
		}
		actor := pluginsdk.ActorFrom(r)
		a := &actor
		if c.AsPlugin {
			a = nil
		}
		out, err := f(r, c, a)
		if err != nil {
			if unexpected := pluginsdk.WriteHostError(w, err); unexpected != nil {
				pluginsdk.Logger().Error("host call failed", "err", unexpected)
			}
			return
		}
		pluginsdk.WriteJSON(w, http.StatusOK, out)
	})
}
