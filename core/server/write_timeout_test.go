package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestWriteTimeout: over a real connection, an ordinary request not
// answered within its body time plus STRATA_WRITE_TIMEOUT gets its
// connection cut; a quick one is answered; a long answer (downloads,
// exports) and an event stream have no deadline.
func TestWriteTimeout(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		slow := func(c *gin.Context) {
			time.Sleep(400 * time.Millisecond)
			c.JSON(200, gin.H{"status": "success"})
		}
		inst := testenv.NewInstanceWith(t, e, server.Deps{ExtraRoutes: []server.Route{
			{Scope: server.App, Method: "GET", Path: "/probe/slow", Handler: slow},
			{Scope: server.App, Method: "GET", Path: "/probe/long", Handler: slow, LongAnswer: true},
			{Scope: server.App, Method: "GET", Path: "/probe/stream", Handler: slow, Stream: true},
			{Scope: server.App, Method: "GET", Path: "/probe/quick", Handler: func(c *gin.Context) { c.JSON(200, gin.H{"status": "success"}) }},
		}}, func(c *config.Config) { c.BodyTimeout, c.WriteTimeout = 50*time.Millisecond, 100*time.Millisecond })
		testenv.NewApp(t, inst.Apps, "dig")
		srv := httptest.NewServer(inst.Server)
		defer srv.Close()
		for _, tc := range []struct {
			path     string
			answered bool
		}{
			{"/dig/api/probe/quick", true},
			{"/dig/api/probe/slow", false},
			{"/dig/api/probe/long", true},
			{"/dig/api/probe/stream", true},
		} {
			resp, err := http.Get(srv.URL + tc.path)
			ok := err == nil && resp.StatusCode == 200
			if err == nil {
				_, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				ok = ok && rerr == nil
			}
			if ok != tc.answered {
				t.Errorf("%s: answered %v (err %v), want %v", tc.path, ok, err, tc.answered)
			}
		}
	})
}
