package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/store"
)

// patternReader yields n bytes of a repeating pattern without holding
// them (a client streaming a big file).
type patternReader struct{ left int64 }

func (r *patternReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), r.left)
	for i := range p[:n] {
		p[i] = byte('a' + i%26)
	}
	r.left -= n
	return int(n), nil
}

// BenchmarkUpload64MiBx8 sends 8 uploads of 64 MiB at once through the
// router to the local store, the bodies streamed as a client streams
// them, and reports the throughput and the server's peak heap: an upload
// is streamed to disk, never held in memory.
func BenchmarkUpload64MiBx8(b *testing.B) {
	const size, parallel = 64 << 20, 8
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			f := newDigWith(b, e, func(c *config.Config) { c.MaxUploadBytes = size + 1<<20 })
			site := int64(0)
			req := httptest.NewRequest("POST", "/dig/api/record/sites", strings.NewReader(`{"name":"Big"}`))
			req.Header.Set("Authorization", f.writer)
			rec := httptest.NewRecorder()
			f.inst.Server.ServeHTTP(rec, req)
			var m map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || rec.Code != 200 {
				b.Fatalf("site: %d %s", rec.Code, rec.Body.String())
			}
			site = int64(m["id"].(float64))
			url := fmt.Sprintf("/dig/api/record/sites/%d/file", site)
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			var peak atomic.Uint64
			stop := make(chan struct{})
			go heapPeak(stop, &peak)
			b.SetBytes(size * parallel)
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				for range parallel {
					wg.Add(1)
					go func() {
						defer wg.Done()
						pr, pw := io.Pipe()
						mw := multipart.NewWriter(pw)
						go func() {
							part, _ := mw.CreateFormFile("file", "big.bin")
							_, err := io.Copy(part, &patternReader{left: size})
							if err == nil {
								err = mw.Close()
							}
							pw.CloseWithError(err)
						}()
						req := httptest.NewRequest("POST", url, pr)
						req.Header.Set("Authorization", f.writer)
						req.Header.Set("Content-Type", mw.FormDataContentType())
						rec := httptest.NewRecorder()
						f.inst.Server.ServeHTTP(rec, req)
						if rec.Code != 200 {
							b.Errorf("upload: %d %s", rec.Code, rec.Body.String())
						}
					}()
				}
				wg.Wait()
			}
			b.StopTimer()
			close(stop)
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(base.HeapInuse)/(1<<20), "idle-heap-MiB")
		})
	}
}
