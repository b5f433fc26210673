package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/store"
)

func TestPanicBecomesInternalErrorAndServingContinues(t *testing.T) {
	var logs strings.Builder
	backend, err := store.OpenSQLite(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Deps{Config: config.Default(), Apps: apps.NewRegistry(backend, apps.Options{}), Logger: slogTo(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	s.handle(Route{Scope: Instance, Method: http.MethodGet, Path: "/boom", Handler: func(c *gin.Context) {
		panic("secret internal detail")
	}})

	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/boom", nil))
	var body map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != 500 || body["code"] != "internal_error" || body["status"] != "error" {
		t.Fatalf("status %d body %s", rec.Code, rec.Body.String())
	}
	if strings.Contains(rec.Body.String(), "secret internal detail") || strings.Contains(rec.Body.String(), "goroutine") {
		t.Fatalf("panic detail leaked to the client: %s", rec.Body.String())
	}
	if !strings.Contains(logs.String(), "secret internal detail") {
		t.Fatal("panic not logged")
	}

	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/info", nil))
	if rec.Code != 200 {
		t.Fatalf("server stopped serving after a panic: %d", rec.Code)
	}
}
