package server_test

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// ghosts numbers the unknown emails of BenchmarkLogin.
var ghosts atomic.Int64

// BenchmarkLogin measures password logins at the production bcrypt cost
// (12), on all cores: a known account and an unknown email should cost the
// same (no user enumeration by timing).
func BenchmarkLogin(b *testing.B) {
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			inst := testenv.NewInstance(b, e, func(c *config.Config) { c.PasswordCost = auth.DefaultBcryptCost })
			a := testenv.NewApp(b, inst.Apps, "dig")
			hash, err := auth.HashPassword(testenv.Password, auth.DefaultBcryptCost)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := a.DB.Exec(context.Background(), `UPDATE `+a.DB.Sys("users")+` SET password = ?`, hash); err != nil {
				b.Fatal(err)
			}
			for name, email := range map[string]string{"known": "admin@example.org", "unknown_email": "ghost@example.org"} {
				b.Run(name, func(b *testing.B) {
					body := `{"email":"` + email + `","password":"` + testenv.Password + `"}`
					if name == "unknown_email" {
						// Spread over many emails so the lock never engages.
						body = ""
					}
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							payload := body
							if payload == "" {
								// A fresh email each time, across goroutines and
								// runs, so no email reaches the lock.
								payload = `{"email":"ghost` + strconv.FormatInt(ghosts.Add(1), 10) + `@example.org","password":"x-x-x-x-x"}`
							}
							req := httptest.NewRequest("POST", "/dig/api/auth/login", strings.NewReader(payload))
							rec := httptest.NewRecorder()
							inst.Server.ServeHTTP(rec, req)
							if rec.Code != 200 && rec.Code != 401 {
								b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
							}
						}
					})
				})
			}
		})
	}
}

// BenchmarkAuthOverhead compares one read route served without a
// credential, with a JWT and with an API key: the difference is what
// authentication costs per request (signature check, user or key lookup,
// privilege re-read).
func BenchmarkAuthOverhead(b *testing.B) {
	ok := func(c *gin.Context) { c.JSON(200, gin.H{"status": "success"}) }
	routes := []server.Route{
		{Scope: server.App, Method: "GET", Path: "/bench/public", Handler: ok},
		{Scope: server.App, Method: "GET", Path: "/bench/read", Access: auth.Read, Handler: ok},
	}
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			inst := testenv.NewInstanceWith(b, e, server.Deps{ExtraRoutes: routes})
			a := testenv.NewApp(b, inst.Apps, "dig")
			jwt := testenv.Login(b, inst.Server, "dig", "admin@example.org", testenv.Password)
			key := testenv.NewAPIKey(b, a, auth.Reader)
			for _, c := range []struct{ name, path, header string }{
				{"none", "/dig/api/bench/public", ""},
				{"jwt", "/dig/api/bench/read", jwt},
				{"api_key", "/dig/api/bench/read", key},
			} {
				b.Run(c.name, func(b *testing.B) {
					b.ReportAllocs()
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							req := httptest.NewRequest("GET", c.path, nil)
							if c.header != "" {
								req.Header.Set("Authorization", c.header)
							}
							rec := httptest.NewRecorder()
							inst.Server.ServeHTTP(rec, req)
							if rec.Code != 200 {
								b.Fatalf("status %d", rec.Code)
							}
						}
					})
				})
			}
		})
	}
}
