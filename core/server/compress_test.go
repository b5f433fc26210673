package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	kgzip "github.com/klauspost/compress/gzip"

	"github.com/strata-archaeo/strata/core/demo"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// rawClient sends Accept-Encoding as the test sets it and reads the bytes
// as sent (Go's transport would otherwise add gzip and decode).
type rawAnswer struct {
	res  *http.Response
	body []byte // as sent
}

func rawDo(t *testing.T, method, url string, h map[string]string) rawAnswer {
	t.Helper()
	res, b := testenv.RawDo(t, method, url, h)
	return rawAnswer{res, b}
}

// decoded is the body with its Content-Encoding undone.
func (a rawAnswer) decoded(t *testing.T) []byte {
	t.Helper()
	return testenv.Decode(t, a.res.Header.Get("Content-Encoding"), a.body)
}

func (a rawAnswer) varies() bool {
	return strings.Contains(strings.Join(a.res.Header.Values("Vary"), ","), "Accept-Encoding")
}

// TestCompressedAnswers: JSON lists and streamed exports are sent gzip
// when the client takes it (q-values, *, identity), equal to the identity
// answer once decoded, with Vary; small answers, record answers with
// their ETag, file downloads (ranges, already compressed types) and
// errors under the threshold are sent as they are.
func TestCompressedAnswers(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		fillFinds(t, f, 100)
		srv := httptest.NewServer(f.inst.Server)
		t.Cleanup(srv.Close)
		auth := func(h map[string]string) map[string]string {
			out := map[string]string{"Authorization": f.super}
			for k, v := range h {
				out[k] = v
			}
			return out
		}

		list := srv.URL + "/dig/api/records/finds?per_page=100"
		plain := rawDo(t, "GET", list, auth(nil))
		if plain.res.StatusCode != 200 || plain.res.Header.Get("Content-Encoding") != "" || len(plain.body) < 4096 || !plain.varies() {
			t.Fatalf("identity list: %d %q %d bytes, Vary %q", plain.res.StatusCode, plain.res.Header.Get("Content-Encoding"), len(plain.body), plain.res.Header.Values("Vary"))
		}
		for _, c := range []struct{ accept, want string }{
			{"gzip", "gzip"},
			{"gzip, deflate, br, zstd", "gzip"},
			{"br", ""}, // brotli is for the build's files only
			{"*", "gzip"},
			{"x-gzip", "gzip"},
			{"gzip;q=0", ""},
			{"identity", ""},
			{"gzip;q=0.5, identity", ""},
			{"gzip;q=0.5, identity;q=0", "gzip"},
			{"deflate", ""},
		} {
			a := rawDo(t, "GET", list, auth(map[string]string{"Accept-Encoding": c.accept}))
			if a.res.StatusCode != 200 || a.res.Header.Get("Content-Encoding") != c.want || !a.varies() {
				t.Errorf("list, Accept-Encoding %q: %d %q, Vary %q; want %q", c.accept, a.res.StatusCode,
					a.res.Header.Get("Content-Encoding"), a.res.Header.Values("Vary"), c.want)
				continue
			}
			if !bytes.Equal(a.decoded(t), plain.body) {
				t.Errorf("list, Accept-Encoding %q: the decoded body differs from the identity answer", c.accept)
			}
			if c.want != "" && (len(a.body) >= len(plain.body)/3 || a.res.ContentLength != int64(len(a.body)) && a.res.ContentLength != -1) {
				t.Errorf("list gzip: %d bytes (identity %d), Content-Length %d", len(a.body), len(plain.body), a.res.ContentLength)
			}
		}

		// A streamed export: compressed as it goes, the same once decoded.
		export := srv.URL + "/dig/api/records/finds/export?format=csv"
		csvPlain := rawDo(t, "GET", export, auth(nil))
		csvGz := rawDo(t, "GET", export, auth(map[string]string{"Accept-Encoding": "gzip"}))
		if csvGz.res.StatusCode != 200 || csvGz.res.Header.Get("Content-Encoding") != "gzip" ||
			!strings.HasPrefix(csvGz.res.Header.Get("Content-Type"), "text/csv") || !bytes.Equal(csvGz.decoded(t), csvPlain.body) {
			t.Errorf("csv export: %d %q %q", csvGz.res.StatusCode, csvGz.res.Header.Get("Content-Encoding"), csvGz.res.Header.Get("Content-Type"))
		}

		// Under the threshold: as is, but Vary all the same.
		small := rawDo(t, "GET", srv.URL+"/dig/api/records/nowhere", auth(map[string]string{"Accept-Encoding": "gzip"}))
		if small.res.StatusCode != 404 || small.res.Header.Get("Content-Encoding") != "" || !small.varies() ||
			!strings.Contains(string(small.body), `"code":"table_not_found"`) {
			t.Errorf("small error answer: %d %q %s", small.res.StatusCode, small.res.Header.Get("Content-Encoding"), small.body)
		}
		// A record's ETag is its version for If-Match: never re-encoded
		// under it.
		rec := rawDo(t, "GET", srv.URL+"/dig/api/record/finds/1", auth(map[string]string{"Accept-Encoding": "gzip"}))
		if rec.res.StatusCode != 200 || rec.res.Header.Get("ETag") == "" || rec.res.Header.Get("Content-Encoding") != "" {
			t.Errorf("record: %d ETag %q, %q", rec.res.StatusCode, rec.res.Header.Get("ETag"), rec.res.Header.Get("Content-Encoding"))
		}

		// File downloads: the file's own bytes, whole or in ranges, and
		// never a second compression of a compressed type.
		text := []byte(strings.Repeat("Pompeii, regio VI, insula 2: the excavation diary.\n", 200))
		txtID, _ := f.uploadOK(t, f.writer, "finds", 1, "diary.txt", text)
		pngID, _ := f.uploadOK(t, f.writer, "finds", 1, "pixel.png", pngPixel)
		gz := map[string]string{"Accept-Encoding": "gzip, br"}
		whole := rawDo(t, "GET", fmt.Sprintf("%s/dig/api/file/%d/download", srv.URL, txtID), auth(gz))
		if whole.res.StatusCode != 200 || whole.res.Header.Get("Content-Encoding") != "" || !bytes.Equal(whole.body, text) ||
			whole.res.ContentLength != int64(len(text)) {
			t.Errorf("text file: %d %q, %d bytes, Content-Length %d", whole.res.StatusCode, whole.res.Header.Get("Content-Encoding"), len(whole.body), whole.res.ContentLength)
		}
		part := rawDo(t, "GET", fmt.Sprintf("%s/dig/api/file/%d/download", srv.URL, txtID), auth(map[string]string{"Accept-Encoding": "gzip", "Range": "bytes=10-29"}))
		if part.res.StatusCode != 206 || part.res.Header.Get("Content-Encoding") != "" || !bytes.Equal(part.body, text[10:30]) ||
			part.res.Header.Get("Content-Range") != fmt.Sprintf("bytes 10-29/%d", len(text)) {
			t.Errorf("range: %d %q %q %q", part.res.StatusCode, part.res.Header.Get("Content-Encoding"), part.res.Header.Get("Content-Range"), part.body)
		}
		png := rawDo(t, "GET", fmt.Sprintf("%s/dig/api/file/%d/download", srv.URL, pngID), auth(gz))
		if png.res.StatusCode != 200 || png.res.Header.Get("Content-Encoding") != "" || !bytes.Equal(png.body, pngPixel) {
			t.Errorf("png: %d %q", png.res.StatusCode, png.res.Header.Get("Content-Encoding"))
		}
	})
}

// BenchmarkCompressAnswer compresses a list answer of 100 demo finds with each
// coding considered for answers made at each request, reporting the size
// (the reason only gzip is offered: brotli at a comparable speed gains
// little, at its better ratios it costs several times the CPU).
func BenchmarkCompressAnswer(b *testing.B) {
	inst := testenv.NewInstance(b, store.SQLite)
	a := testenv.NewApp(b, inst.Apps, "demo")
	if err := demo.Seed(context.Background(), a, demo.Small, 1, time.Now().UTC()); err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/demo/api/records/finds?per_page=100", nil)
	req.Header.Set("Authorization", testenv.Login(b, inst.Server, "demo", "admin@example.org", testenv.Password))
	rec := httptest.NewRecorder()
	inst.Server.ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	if rec.Code != 200 || len(body) < 4096 {
		b.Fatalf("list: %d %d bytes", rec.Code, len(body))
	}
	for _, c := range []struct {
		name string
		w    resetter // reused, as the server's pool does
	}{
		{"gzip-std-6", must(gzip.NewWriterLevel(io.Discard, 6))},
		{"gzip-klauspost-5", must(kgzip.NewWriterLevel(io.Discard, 5))},
		{"brotli-4", brotli.NewWriterLevel(io.Discard, 4)},
		{"brotli-6", brotli.NewWriterLevel(io.Discard, 6)},
		{"brotli-11", brotli.NewWriterLevel(io.Discard, 11)},
	} {
		b.Run(c.name, func(b *testing.B) {
			var out bytes.Buffer
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				out.Reset()
				c.w.Reset(&out)
				_, _ = c.w.Write(body)
				_ = c.w.Close()
			}
			b.ReportMetric(float64(len(body)), "identity-bytes")
			b.ReportMetric(float64(out.Len()), "encoded-bytes")
		})
	}
}

type resetter interface {
	io.WriteCloser
	Reset(io.Writer)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
