package testenv

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"encoding/json"

	"golang.org/x/crypto/bcrypt"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
)

// NewUser inserts an account with password Password directly in the app's
// database and returns it.
func NewUser(t testing.TB, a *apps.App, name, email string, privilege int) *auth.User {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(Password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	u := &auth.User{Name: name, Email: auth.NormalizeEmail(email), Password: string(hash), Privilege: privilege,
		TokenVersion: 1, CreatedAt: now, UpdatedAt: now}
	if err := a.DB.Gorm.WithContext(context.Background()).Create(u).Error; err != nil {
		t.Fatalf("create user %s: %v", email, err)
	}
	return u
}

// Login signs in through the API and returns the bearer header value.
func Login(t testing.TB, h http.Handler, app, email, password string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	req := httptest.NewRequest("POST", "/"+app+"/api/auth/login", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out struct {
		Token string `json:"token"`
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil || out.Token == "" {
		t.Fatalf("login %s on %s: %d %s", email, app, rec.Code, rec.Body.String())
	}
	return "Bearer " + out.Token
}

// Bearer is a header map carrying an Authorization value.
func Bearer(value string) map[string]string { return map[string]string{"Authorization": value} }

// NewAPIKey creates a key at privilege in the app and returns the bearer
// header value.
func NewAPIKey(t testing.TB, a *apps.App, privilege int) string {
	t.Helper()
	_, plain, err := auth.CreateAPIKey(context.Background(), a.DB, "test key", privilege, nil, time.Now().UTC())
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + plain
}
