package server_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestAppConcurrencyCap: one app at its cap of requests in progress gets
// 503 app_busy with Retry-After for the next one, after the queue wait;
// another app is served meanwhile; streams hold no slot; a freed slot
// serves the app again.
func TestAppConcurrencyCap(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		release := make(chan struct{})
		entered := make(chan struct{}, 16)
		block := func(c *gin.Context) {
			entered <- struct{}{}
			<-release
			c.JSON(200, gin.H{"status": "success"})
		}
		inst := testenv.NewInstanceWith(t, e, server.Deps{ExtraRoutes: []server.Route{
			{Scope: server.App, Method: "GET", Path: "/probe/block", Handler: block},
			{Scope: server.App, Method: "GET", Path: "/probe/stream", Handler: block, Stream: true},
			{Scope: server.App, Method: "GET", Path: "/probe/quick", Handler: func(c *gin.Context) { c.JSON(200, gin.H{"status": "success"}) }},
		}}, func(c *config.Config) { c.AppMaxConcurrent, c.AppQueueTimeout = 2, 50*time.Millisecond })
		testenv.NewApp(t, inst.Apps, "dig")
		testenv.NewApp(t, inst.Apps, "museum")

		var wg sync.WaitGroup
		held := func(path string) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := httptest.NewRecorder()
				inst.Server.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
				if rec.Code != 200 {
					t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
				}
			}()
			<-entered
		}
		held("/dig/api/probe/block")
		held("/dig/api/probe/block")
		held("/dig/api/probe/stream") // a stream beyond the cap still runs

		for _, tc := range []struct {
			path, code string
			status     int
		}{
			{"/dig/api/probe/quick", "app_busy", http.StatusServiceUnavailable},
			{"/museum/api/probe/quick", "success", http.StatusOK},
			{"/nowhere/api/probe/quick", "app_not_found", http.StatusNotFound},
		} {
			start := time.Now()
			rec := testenv.Scenario{Method: "GET", URL: tc.path, ExpectedStatus: tc.status, ExpectedContent: []string{`"` + tc.code + `"`}}.Run(t, inst.Server)
			if tc.code == "app_busy" {
				if rec.Header().Get("Retry-After") != "1" {
					t.Errorf("Retry-After %q", rec.Header().Get("Retry-After"))
				}
				if time.Since(start) < 50*time.Millisecond {
					t.Errorf("refused after %v, without waiting for a slot", time.Since(start))
				}
			}
		}
		close(release)
		wg.Wait()
		testenv.Scenario{Method: "GET", URL: "/dig/api/probe/quick", ExpectedStatus: 200}.Run(t, inst.Server)
	})
}
