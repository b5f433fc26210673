// Package mailtest runs a local stand-in for the external mail provider: a
// real HTTP server that speaks the provider's wire format (CONTRACT §7),
// checks every request the way the provider does, and records what it
// accepted, so tests go through the real mail client end to end.
package mailtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/strata-archaeo/strata/core/mail"
)

// Test settings the provider expects.
const (
	APIKey      = "re_test_key"
	FromAddress = "noreply@strata.test"
)

// Received is one message the provider accepted, as it arrived.
type Received struct {
	Authorization string
	From          string   `json:"from"`
	To            []string `json:"to"`
	Subject       string   `json:"subject"`
	HTML          string   `json:"html"`
	Text          string   `json:"text"`
}

// Provider is the local mail provider.
type Provider struct {
	URL string

	mu         sync.Mutex
	received   []Received
	failStatus int
	failBody   string
	failWhen   func(Received) bool
}

// NewProvider starts a provider, closed at the end of the test.
func NewProvider(t testing.TB) *Provider {
	t.Helper()
	p := &Provider{}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// serve answers like the provider: 401 for a wrong key, 422 for a message
// without sender, recipients, subject or body, 200 with an id otherwise.
func (p *Provider) serve(w http.ResponseWriter, r *http.Request) {
	reply := func(status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
	if r.Method != http.MethodPost || r.URL.Path != "/emails" {
		reply(http.StatusNotFound, `{"statusCode":404,"name":"not_found","message":"no such endpoint"}`)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+APIKey {
		reply(http.StatusUnauthorized, `{"statusCode":401,"name":"validation_error","message":"API key is invalid"}`)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		reply(http.StatusBadRequest, `{"statusCode":400,"name":"invalid_content_type","message":"JSON expected"}`)
		return
	}
	var m Received
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		reply(http.StatusBadRequest, `{"statusCode":400,"name":"invalid_body","message":"malformed JSON"}`)
		return
	}
	if m.From == "" || len(m.To) == 0 || m.Subject == "" || (m.HTML == "" && m.Text == "") {
		reply(http.StatusUnprocessableEntity, `{"statusCode":422,"name":"missing_required_field","message":"from, to, subject and a body are required"}`)
		return
	}
	m.Authorization = r.Header.Get("Authorization")
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failStatus != 0 && (p.failWhen == nil || p.failWhen(m)) {
		reply(p.failStatus, p.failBody)
		return
	}
	p.received = append(p.received, m)
	reply(http.StatusOK, fmt.Sprintf(`{"id":"msg-%d"}`, len(p.received)))
}

// Fail makes the provider refuse every further message with status and
// body (after the usual checks); status 0 makes it accept again.
func (p *Provider) Fail(status int, body string) { p.FailWhen(nil, status, body) }

// FailWhen makes the provider refuse, with status and body, the messages
// for which refuse is true (all when it is nil).
func (p *Provider) FailWhen(refuse func(Received) bool, status int, body string) {
	p.mu.Lock()
	p.failStatus, p.failBody, p.failWhen = status, body, refuse
	p.mu.Unlock()
}

// Received returns the accepted messages, oldest first.
func (p *Provider) Received() []Received {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Received(nil), p.received...)
}

// Clear forgets the messages received so far.
func (p *Provider) Clear() {
	p.mu.Lock()
	p.received = nil
	p.mu.Unlock()
}

// Getenv is an environment in which mail is configured to go to this
// provider; extra holds further key, value pairs (an empty value unsets a
// variable).
func (p *Provider) Getenv(extra ...string) func(string) string {
	env := map[string]string{
		mail.EnvAPIKey:      APIKey,
		mail.EnvFromAddress: FromAddress,
		mail.EnvProviderURL: p.URL,
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return func(k string) string { return env[k] }
}

// Client is a mail client configured to send to this provider.
func (p *Provider) Client(extra ...string) *mail.Client { return mail.New(p.Getenv(extra...), nil) }
