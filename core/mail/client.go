// Package mail sends the service's transactional emails (SPEC §6) through
// the HTTP API of an external mail provider (CONTRACT §7): one JSON POST per
// message, no SMTP. It also holds the message templates, in English and
// Italian, chosen by the request's Accept-Language.
package mail

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/version"
)

// Environment variables of the mail provider (CONTRACT §7). Mail is
// configured only when both the key and the from address are set.
const (
	EnvAPIKey      = "MAIL_PROVIDER_API_KEY"
	EnvFromAddress = "MAIL_FROM_ADDRESS"
	EnvFromName    = "MAIL_FROM_NAME"
	EnvProviderURL = "MAIL_PROVIDER_URL"
)

// DefaultProviderURL is the base address of the provider's public API when
// MAIL_PROVIDER_URL is not set. The wire format of CONTRACT §7
// (POST /emails, bearer key, {from, to, subject, html, text}) is Resend's;
// any provider or relay speaking it can be used through MAIL_PROVIDER_URL.
const DefaultProviderURL = "https://api.resend.com"

// DefaultFromName is the sender's display name when MAIL_FROM_NAME is not
// set: the service's own name (SPEC §6).
const DefaultFromName = "Strata"

// sendTimeout bounds one call to the provider, so a stalled provider ends
// in email_send_failed instead of a request hanging until the client gives
// up.
const sendTimeout = 20 * time.Second

// Errors a sender answers with (CONTRACT §8). The provider's own text never
// reaches the caller: it is in the wrapped cause, which only logs see.
var (
	ErrNotConfigured = errs.New(errs.Unavailable, "email_not_configured", "email is not configured on this service")
	ErrSendFailed    = errs.New(errs.BadGateway, "email_send_failed", "the email could not be sent; try again later")
)

// Message is one email. HTML and Text are the two parts of the same body.
type Message struct {
	To      []string
	Subject string
	HTML    string
	Text    string
}

// ProviderError is a non-2xx answer of the provider. It is logged, never
// shown to the client.
type ProviderError struct {
	Status int
	Body   string // the start of the provider's answer
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("mail provider answered HTTP %d: %s", e.Status, e.Body)
}

// Client sends mail through the provider's HTTP API. Its settings are read
// from the environment on every call (SPEC §6: checked on every call), so
// configuring mail needs no restart.
type Client struct {
	getenv func(string) string
	http   *http.Client
	// latency is a moving average of the provider's round trips in
	// nanoseconds, so a flow that sends nothing can take as long as one
	// that sends (see Imitate).
	latency atomic.Int64
}

// initialLatency is the estimate of a round trip before any was measured.
const initialLatency = 300 * time.Millisecond

// New returns a client reading its settings through getenv (os.Getenv when
// nil) and calling the provider with hc (a client with a timeout when nil).
func New(getenv func(string) string, hc *http.Client) *Client {
	if getenv == nil {
		getenv = os.Getenv
	}
	if hc == nil {
		hc = &http.Client{Timeout: sendTimeout}
	}
	c := &Client{getenv: getenv, http: hc}
	c.latency.Store(int64(initialLatency))
	return c
}

// settings are the provider settings in force for one call.
type settings struct {
	key, fromAddress, fromName, baseURL string
}

func (c *Client) settings() settings {
	get := func(k string) string { return strings.TrimSpace(c.getenv(k)) }
	s := settings{key: get(EnvAPIKey), fromAddress: get(EnvFromAddress), fromName: get(EnvFromName), baseURL: get(EnvProviderURL)}
	if s.fromName == "" {
		s.fromName = DefaultFromName
	}
	if s.baseURL == "" {
		s.baseURL = DefaultProviderURL
	}
	s.baseURL = strings.TrimRight(s.baseURL, "/")
	return s
}

// Configured reports whether mail can be sent now: both the provider key
// and the from address are set.
func (c *Client) Configured() bool {
	s := c.settings()
	return s.key != "" && s.fromAddress != ""
}

// wireMessage is the provider's request body (CONTRACT §7).
type wireMessage struct {
	From    string   `json:"from"`
	To      []string `json:"to"`
	Subject string   `json:"subject"`
	HTML    string   `json:"html"`
	Text    string   `json:"text"`
}

// Send delivers m. It returns ErrNotConfigured when mail is not configured
// and ErrSendFailed, wrapping the cause (the provider's status and text, or
// the transport error), when the provider does not accept the message.
func (c *Client) Send(ctx context.Context, m Message) error {
	s := c.settings()
	if s.key == "" || s.fromAddress == "" {
		return ErrNotConfigured
	}
	if len(m.To) == 0 {
		return fmt.Errorf("mail: message %q has no recipient", m.Subject)
	}
	body, err := json.Marshal(wireMessage{
		From: FormatFrom(s.fromName, s.fromAddress), To: m.To,
		Subject: oneLine(m.Subject), HTML: m.HTML, Text: m.Text,
	})
	if err != nil {
		return fmt.Errorf("mail: encode message: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.baseURL+"/emails", bytes.NewReader(body))
	if err != nil {
		return ErrSendFailed.Wrap(fmt.Errorf("mail: build request: %w", err))
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "strata/"+version.Version)
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return ErrSendFailed.Wrap(fmt.Errorf("mail: call provider: %w", err))
	}
	defer resp.Body.Close()
	// Only the start of an error answer is kept for the log; the rest is
	// drained so the connection can be reused.
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	c.observe(time.Since(start))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return ErrSendFailed.Wrap(&ProviderError{Status: resp.StatusCode, Body: strings.TrimSpace(string(head))})
	}
	return nil
}

// observe folds one round trip into the moving average (weight 1/4, so a
// few sends settle it and one outlier does not dominate).
func (c *Client) observe(d time.Duration) {
	for {
		old := c.latency.Load()
		next := old + (int64(d)-old)/4
		if c.latency.CompareAndSwap(old, next) {
			return
		}
	}
}

// TypicalLatency is the current estimate of one round trip to the provider.
func (c *Client) TypicalLatency() time.Duration { return time.Duration(c.latency.Load()) }

// Imitate waits about as long as a send takes, for a flow that must not
// reveal by its timing that it had nothing to send (a password reset for an
// email with no account). It returns early when ctx ends.
func (c *Client) Imitate(ctx context.Context) {
	t := time.NewTimer(c.TypicalLatency())
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// FormatFrom renders the sender as `Name <addr>` (CONTRACT §7). The name is
// quoted only when it holds characters that would change the meaning of the
// address (RFC 5322 specials), and control characters are dropped so the
// value stays one header line.
func FormatFrom(name, addr string) string {
	name = strings.TrimSpace(oneLine(name))
	if name == "" {
		return addr
	}
	if strings.ContainsAny(name, `()<>[]:;@\,."`) {
		name = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `"`
	}
	return name + " <" + addr + ">"
}

// oneLine replaces control characters (line breaks included) with spaces:
// subjects and display names are header values.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
