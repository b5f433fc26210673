package pluginsdk

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
)

type ctxKey int

const (
	actorKey ctxKey = iota
	paramsKey
)

// ActorFrom returns who is calling a route (the zero Actor for a request
// that did not come through the SDK, e.g. in a unit test of the handler).
func ActorFrom(r *http.Request) Actor {
	a, _ := r.Context().Value(actorKey).(Actor)
	return a
}

// Param returns a path parameter of the route, e.g. Param(r, "id") for
// "/things/:id"; "" when there is none of that name.
func Param(r *http.Request, name string) string {
	p, _ := r.Context().Value(paramsKey).(map[string]string)
	return p[name]
}

// JobHeader carries the job id of a job route's call (Route.Job).
const JobHeader = "X-Strata-Job"

// JobID is the id of the server job a job route's request runs in, for
// Host.JobProgress; "" when the route was called directly (no job system,
// or not a job route).
func JobID(r *http.Request) string { return r.Header.Get(JobHeader) }

// WithRequestContext returns r with an actor and path parameters attached,
// as HandleRequest does; for testing a handler without the SDK's server.
func WithRequestContext(r *http.Request, actor Actor, params map[string]string) *http.Request {
	ctx := context.WithValue(r.Context(), actorKey, actor)
	ctx = context.WithValue(ctx, paramsKey, params)
	r = r.WithContext(ctx)
	for k, v := range params {
		// Also the standard library's way, for handlers using PathValue.
		r.SetPathValue(k, v)
	}
	return r
}

// WriteJSON writes v as a JSON response with the given status, without
// HTML escaping (as the server's own responses). Success bodies of the
// server carry "status":"success"; plugin routes should too.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := encodeJSON(v)
	if err != nil {
		WriteError(w, http.StatusInternalServerError, "internal_error", "the plugin could not encode its response")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// WriteError writes the server's error envelope:
// {"status":"error","code":code,"message":message}.
func WriteError(w http.ResponseWriter, status int, code, message string) {
	b, _ := encodeJSON(map[string]string{"status": "error", "code": code, "message": message})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

var errResponseTooLarge = errors.New("pluginsdk: response body larger than MaxBodyLimit")

// recorder captures a handler's response in memory: it crosses gRPC as one
// message, so it is bounded like a request body.
type recorder struct {
	header   http.Header
	status   int
	body     bytes.Buffer
	overflow bool
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if r.body.Len()+len(p) > MaxBodyLimit {
		r.overflow = true
		return 0, errResponseTooLarge
	}
	if r.header.Get("Content-Type") == "" {
		// As net/http does for a handler that sets no type.
		r.header.Set("Content-Type", http.DetectContentType(p))
	}
	return r.body.Write(p)
}

// hopHeaders are not the plugin's to set: the server frames the response.
var hopHeaders = []string{"Connection", "Content-Length", "Keep-Alive", "Transfer-Encoding", "Trailer", "Upgrade"}

// headers flattens the response headers; several values of one header are
// joined with ", " (the list form of HTTP).
func (r *recorder) headers() map[string]string {
	out := make(map[string]string, len(r.header))
	for k, vs := range r.header {
		if len(vs) == 0 || isHop(k) {
			continue
		}
		out[http.CanonicalHeaderKey(k)] = strings.Join(vs, ", ")
	}
	return out
}

func isHop(k string) bool {
	for _, h := range hopHeaders {
		if strings.EqualFold(h, k) {
			return true
		}
	}
	return false
}
