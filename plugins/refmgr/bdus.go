package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/strata-archaeo/strata/pluginsdk"
)

// BraDypUS 5.4.2's own web client (ZoteroLibsPanel.vue, ZoteroSection.vue)
// calls the reference routes by their BraDypUS name, /api/zotero/*, and
// reads and sends zotero_* keys (controllers/Zotero.php). The plugin serves
// that family beside its own /refmgr/* with the very same handlers, access
// levels and timeouts: bradypusFamily renames the keys of the request body
// on the way in and those of the answer on the way out, so the two
// families can never drift apart in what they do.

// zoteroKeys are the answer's keys BraDypUS names otherwise (at any depth:
// a link inside an answer, a search hit, a sync's failed item).
var zoteroKeys = map[string]string{
	"refmgr_id":      "zotero_id",
	"refmgr_key":     "zotero_key",
	"refmgr_version": "zotero_version",
	"refmgr_url":     "zotero_url",
}

// zoteroCodes are the plugin's error codes named after the provider
// (zotero_api_error is BraDypUS's own; the others follow it).
var zoteroCodes = map[string]string{
	"refmgr_api_error":         "zotero_api_error",
	"refmgr_rate_limited":      "zotero_rate_limited",
	"refmgr_library_not_found": "zotero_library_not_found",
	"refmgr_access_denied":     "zotero_access_denied",
	"refmgr_unavailable":       "zotero_unavailable",
	"invalid_refmgr_id":        "invalid_zotero_id",
	"invalid_refmgr_key":       "invalid_zotero_key",
}

// zoteroWords names the body's keys in the messages as the client sends
// them.
var zoteroWords = strings.NewReplacer("refmgr_id", "zotero_id", "refmgr_key", "zotero_key")

// bodyKeys are the request body's keys BraDypUS names otherwise: its name
// → the handler's.
var bodyKeys = map[string]string{"zotero_id": "refmgr_id", "zotero_key": "refmgr_key"}

// zoteroRoutes are the BraDypUS family of routes: each /refmgr/* route as
// /zotero/*, its handler behind bradypusFamily.
func zoteroRoutes(routes []pluginsdk.Route) []pluginsdk.Route {
	out := make([]pluginsdk.Route, 0, len(routes))
	for _, r := range routes {
		rest, ok := strings.CutPrefix(r.Path, "/refmgr/")
		if !ok {
			continue
		}
		r.Path = "/zotero/" + rest
		r.Handler = bradypusFamily(r.Handler)
		out = append(out, r)
	}
	return out
}

// bradypusFamily serves h with BraDypUS's names.
func bradypusFamily(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			data, err := io.ReadAll(r.Body)
			if err != nil {
				pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_json", "the body could not be read")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(renameBody(data)))
		}
		buf := &buffered{header: w.Header()}
		h.ServeHTTP(buf, r)
		if buf.status == 0 {
			buf.status = http.StatusOK
		}
		out := buf.body.Bytes()
		if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			out = renameAnswer(out)
		}
		w.WriteHeader(buf.status)
		_, _ = w.Write(out)
	})
}

// renameBody gives a JSON object body the handler's names: a zotero_* key
// becomes its refmgr_* one, and a refmgr_* key sent is dropped (this
// family reads BraDypUS's names only). Anything else is passed on as it
// came, for the handler to refuse.
func renameBody(data []byte) []byte {
	m, err := pluginsdk.DecodeObject(data)
	if err != nil || len(m) == 0 {
		return data
	}
	for _, ours := range bodyKeys {
		delete(m, ours)
	}
	for theirs, ours := range bodyKeys {
		if v, ok := m[theirs]; ok {
			delete(m, theirs)
			m[ours] = v
		}
	}
	out, err := encode(m)
	if err != nil {
		return data
	}
	return out
}

// renameAnswer gives a JSON answer BraDypUS's names; an answer that is not
// JSON is left as it is.
func renameAnswer(data []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // ids and versions stay as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return data
	}
	out, err := encode(renameValue(v, ""))
	if err != nil {
		return data
	}
	return out
}

// renameValue renames the keys of objects at any depth, and the values of
// "code" and "message" (key is the key v is found under).
func renameValue(v any, key string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			name := k
			if z, ok := zoteroKeys[k]; ok {
				name = z
			}
			out[name] = renameValue(x, k)
		}
		return out
	case []any:
		for i, x := range t {
			t[i] = renameValue(x, "")
		}
		return t
	case string:
		switch key {
		case "code":
			if z, ok := zoteroCodes[t]; ok {
				return z
			}
		case "message":
			return zoteroWords.Replace(t)
		}
	}
	return v
}

// encode is JSON without HTML escaping: a citation is HTML and must stay
// as the provider wrote it.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// buffered holds a handler's answer for renaming; its headers are the
// real writer's.
type buffered struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *buffered) Header() http.Header { return b.header }

func (b *buffered) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *buffered) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
