package server

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/strata-archaeo/strata/core/httpenc"
)

// compressMinSize is the smallest answer compressed: below it the coding's
// framing and the CPU are not worth the few bytes saved.
const compressMinSize = 1024

// Compressed answers. A JSON, text (CSV, GeoJSON, SQL...), JavaScript,
// XML or SVG answer of compressMinSize bytes or more is sent compressed
// when the request's Accept-Encoding takes a coding the server offers
// (dynamicCodings), with Vary: Accept-Encoding on every answer whose form
// depends on it. Left as the handler wrote them:
//   - a text/event-stream (job progress): each event must reach the
//     client when flushed, not wait in a compressor;
//   - an answer that already has a Content-Encoding (the web
//     application's precompressed assets), a Content-Range (206), an
//     Accept-Ranges (file downloads: ranges count in the file's own
//     bytes) or an ETag: the tag is the handler's (a record's version for
//     If-Match, a file's digest), and a re-encoded body under the same
//     strong tag would break it;
//   - other types (images, archives, PDF: compressed already), answers
//     without a body (HEAD without one, 204, 304), Cache-Control:
//     no-transform.
//
// A streamed answer (an export) is compressed as it goes: a Flush from
// the handler flushes the compressor, then the connection. Memory is one
// pooled compressor and a compressMinSize buffer per answer.
func compressAnswers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &compressWriter{ResponseWriter: w,
			coding: httpenc.Negotiate(r.Header.Get("Accept-Encoding"), dynamicCodings...)}
		defer cw.release()
		next.ServeHTTP(cw, r)
		cw.finish()
	})
}

// dynamicCodings are the codings offered for answers made at each
// request, in order of preference. Only gzip: on a list of 100 demo
// finds (BenchmarkCompressAnswer: 10,225 bytes) gzip gives 1,914 bytes
// in 25 µs, brotli level 4 5% less in 4 times the CPU, level 6 13% less
// in 5 times: a poor trade on a small shared server. The web
// application's files, compressed once at build, get brotli's best.
var dynamicCodings = []string{"gzip"}

type encoder interface {
	io.Writer
	Flush() error
	Close() error
	Reset(io.Writer)
}

// gzip level 5 of klauspost/compress (already in the build, through the
// S3 client): the standard library's level 6 size in a third of its time.
var encoderPools = map[string]*sync.Pool{
	"gzip": {New: func() any { w, _ := gzip.NewWriterLevel(io.Discard, 5); return w }},
}

const (
	undecided = iota
	plain
	compressing
)

type compressWriter struct {
	http.ResponseWriter
	coding string // what the client takes; "" for identity
	status int
	state  int
	buf    []byte
	enc    encoder
}

func (w *compressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *compressWriter) WriteHeader(code int) {
	if w.state != undecided || code < 200 {
		w.ResponseWriter.WriteHeader(code) // 1xx pass straight on
		return
	}
	if w.status == 0 {
		w.status = code
	}
}

func (w *compressWriter) Write(b []byte) (int, error) {
	switch w.state {
	case plain:
		return w.ResponseWriter.Write(b)
	case compressing:
		return w.enc.Write(b)
	}
	if !w.wanted() {
		w.start(false)
		return w.ResponseWriter.Write(b)
	}
	if len(w.buf)+len(b) < compressMinSize {
		w.buf = append(w.buf, b...)
		return len(b), nil
	}
	w.start(true)
	return w.enc.Write(b)
}

// Flush sends what the handler wrote: a stream that flushes before
// reaching compressMinSize is compressed (more is coming).
func (w *compressWriter) Flush() {
	if w.state == undecided {
		w.start(w.wanted())
	}
	if w.state == compressing {
		_ = w.enc.Flush()
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// finish ends the answer once the handler returned (not after a panic:
// the connection is dropped then).
func (w *compressWriter) finish() {
	switch w.state {
	case undecided:
		// Under compressMinSize (or nothing written).
		w.start(false)
	case compressing:
		_ = w.enc.Close()
	}
}

func (w *compressWriter) release() {
	if w.enc != nil {
		w.enc.Reset(io.Discard)
		encoderPools[w.coding].Put(w.enc)
		w.enc = nil
	}
}

// varies reports whether the answer's form depends on Accept-Encoding.
func (w *compressWriter) varies() bool {
	hd := w.ResponseWriter.Header()
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	if status == http.StatusNoContent || status == http.StatusNotModified || status == http.StatusPartialContent ||
		hd.Get("Content-Encoding") != "" || hd.Get("Content-Range") != "" || hd.Get("Accept-Ranges") != "" ||
		hd.Get("ETag") != "" || strings.Contains(hd.Get("Cache-Control"), "no-transform") {
		return false
	}
	return compressible(hd.Get("Content-Type"))
}

// wanted reports whether this answer is to be compressed.
func (w *compressWriter) wanted() bool {
	if w.coding == "" || !w.varies() {
		return false
	}
	if cl := w.ResponseWriter.Header().Get("Content-Length"); cl != "" {
		n, err := strconv.ParseInt(cl, 10, 64)
		return err == nil && n >= compressMinSize
	}
	return true
}

// start decides: the headers go out, then what was held back.
func (w *compressWriter) start(compress bool) {
	hd := w.ResponseWriter.Header()
	if w.varies() && !hasToken(hd.Values("Vary"), "Accept-Encoding") {
		hd.Add("Vary", "Accept-Encoding")
	}
	if compress {
		w.state = compressing
		hd.Del("Content-Length")
		hd.Set("Content-Encoding", w.coding)
	} else {
		w.state = plain
	}
	if w.status != 0 {
		w.ResponseWriter.WriteHeader(w.status)
	}
	if compress {
		w.enc = encoderPools[w.coding].Get().(encoder)
		w.enc.Reset(w.ResponseWriter)
		_, _ = w.enc.Write(w.buf)
	} else if len(w.buf) > 0 {
		_, _ = w.ResponseWriter.Write(w.buf)
	}
	w.buf = nil
}

// compressible is the media types worth compressing: text of every kind
// but event streams, JSON, XML and JavaScript.
func compressible(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == "text/event-stream":
		return false
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/javascript", "application/xml", "application/x-ndjson", "application/yaml",
		"application/sql", "image/svg+xml":
		return true
	}
	return false
}

func hasToken(values []string, token string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) || strings.TrimSpace(t) == "*" {
				return true
			}
		}
	}
	return false
}
