package doi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/publish/datacite"
)

// Provider mints DOIs with one service.
type Provider interface {
	// Name is "datacite" or "zenodo".
	Name() string
	// Mint makes req's DOI findable, resuming from st (the State saved by
	// the previous attempt; the zero value the first time). save is called
	// with the new state after every step the remote side has committed,
	// before the next step, so that a crash or error anywhere resumes
	// without minting twice. If save fails, Mint stops and returns its
	// error. Returns the DOI and its URL.
	Mint(ctx context.Context, req Request, st State, save func(State) error) (Result, error)
}

// Request is one snapshot to mint a DOI for.
type Request struct {
	// Key is unique and stable per (application, snapshot): every retry of
	// one snapshot carries the same key.
	Key string
	// Metadata describes the snapshot; DOI is ignored (the provider sets it).
	Metadata datacite.Metadata
	// Files are uploaded by Zenodo (the crate zip); DataCite ignores them.
	Files []File
	// Previous is the final State of the snapshot this one is a new version
	// of; nil for a first version.
	Previous *State
}

// File is one file to deposit.
type File struct {
	Name string
	Size int64
	// Open returns the content; it may be called more than once (retries).
	Open func() (io.ReadCloser, error)
}

// State is how far minting got, kept (as JSON) by the caller between
// attempts. The zero value means nothing was done yet.
type State struct {
	Provider string `json:"provider,omitempty"`
	// Step is the last step committed: "" (none), then for DataCite
	// "drafted", "published", "done"; for Zenodo "creating", "created",
	// "uploaded", "publishing", "done".
	Step string `json:"step,omitempty"`
	// Key is Request.Key, so a State cannot resume another snapshot.
	Key string `json:"key,omitempty"`
	DOI string `json:"doi,omitempty"`
	URL string `json:"url,omitempty"`
	// DepositionID and Bucket are Zenodo's.
	DepositionID int64  `json:"deposition_id,omitempty"`
	Bucket       string `json:"bucket,omitempty"`
	// Uploaded maps file name to the MD5 (hex) Zenodo confirmed.
	Uploaded map[string]string `json:"uploaded,omitempty"`
}

// Result is a minted DOI.
type Result struct {
	DOI string
	// URL is the DOI's resolver URL, https://doi.org/<DOI>.
	URL string
}

// Error codes.
const (
	CodeAuth     = "doi_auth_failed"
	CodeRejected = "doi_rejected"
	CodeUnavail  = "doi_unavailable"
	CodeMismatch = "doi_state_mismatch"
	CodeInvalid  = "doi_invalid"
)

// Retryable reports whether err is a transient failure (5xx, 429, network
// error, timeout) worth retrying with the saved State.
func Retryable(err error) bool { return errs.CodeOf(err) == CodeUnavail }

// SuffixFor derives a DOI suffix from a request key: "strata-" and 16
// lowercase base32 characters of the key's SHA-256, so the same key always
// names the same DOI and the key itself is not revealed.
func SuffixFor(key string) string {
	sum := sha256.Sum256([]byte("strata-doi\x00" + key))
	s := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))
	return "strata-" + s[:4] + "-" + s[4:8] + "-" + s[8:12] + "-" + s[12:16]
}

// Marker is the opaque token written into a Zenodo deposition's notes so a
// retry can recognise the deposition it created.
func Marker(key string) string {
	sum := sha256.Sum256([]byte("strata-zenodo\x00" + key))
	return "strata-key-" + hex.EncodeToString(sum[:16])
}

func resolverURL(doi string) string { return "https://doi.org/" + doi }

// checkResume refuses a State from another provider or snapshot.
func checkResume(name string, req Request, st State) error {
	if req.Key == "" {
		return errs.New(errs.Invalid, CodeInvalid, "request key is empty")
	}
	if st.Provider != "" && st.Provider != name {
		return errs.Newf(errs.Conflict, CodeMismatch, "state belongs to provider %q, not %q", st.Provider, name)
	}
	if st.Key != "" && st.Key != req.Key {
		return errs.New(errs.Conflict, CodeMismatch, "state belongs to another snapshot")
	}
	if req.Previous != nil && req.Previous.Provider != "" && req.Previous.Provider != name {
		return errs.Newf(errs.Conflict, CodeMismatch, "previous version was minted with %q", req.Previous.Provider)
	}
	return nil
}

// maxBody bounds every response body read.
const maxBody = 1 << 20

// client does JSON requests and classifies failures.
type client struct {
	hc      *http.Client
	service string // "DataCite", "Zenodo" (for messages)
	auth    func(*http.Request)
}

// do sends a request and decodes a 2xx JSON answer into out (when non-nil).
func (c *client) do(ctx context.Context, method, url, ctype string, body io.Reader, size int64, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, errs.New(errs.Internal, CodeInvalid, "cannot build request").Wrap(errors.New(scrub(err.Error())))
	}
	if size >= 0 && body != nil {
		req.ContentLength = size
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json, application/vnd.api+json")
	c.auth(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, c.transportError(ctx, method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return resp.StatusCode, c.transportError(ctx, method, err)
	}
	if len(data) > maxBody {
		return resp.StatusCode, errs.Newf(errs.BadGateway, CodeUnavail, "%s answered more than %d bytes", c.service, maxBody)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out != nil && len(bytes.TrimSpace(data)) > 0 {
			if err := json.Unmarshal(data, out); err != nil {
				return resp.StatusCode, errs.Newf(errs.BadGateway, CodeUnavail, "%s answered %s with invalid JSON", c.service, method).Wrap(err)
			}
		}
		return resp.StatusCode, nil
	}
	return resp.StatusCode, c.statusError(method, resp.StatusCode, data)
}

func (c *client) transportError(ctx context.Context, method string, err error) error {
	// A *url.Error quotes the request URL; keep only the cause.
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		err = ue.Unwrap()
	}
	kind := errs.Unavailable
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()) {
		kind = errs.Timeout
	}
	return errs.Newf(kind, CodeUnavail, "%s did not answer %s", c.service, method).Wrap(errors.New(scrub(err.Error())))
}

func (c *client) statusError(method string, status int, body []byte) error {
	msg := remoteMessage(body)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e := errs.Newf(errs.Unauthenticated, CodeAuth, "%s refused the credentials (HTTP %d)", c.service, status)
		if msg != "" {
			e = e.With("remote", msg)
		}
		return e
	case status == http.StatusTooManyRequests || status >= 500:
		return errs.Newf(errs.Unavailable, CodeUnavail, "%s failed %s (HTTP %d)", c.service, method, status).With("status", status)
	default:
		if msg == "" {
			msg = http.StatusText(status)
		}
		return errs.Newf(errs.BadGateway, CodeRejected, "%s rejected %s (HTTP %d): %s", c.service, method, status, msg).
			With("status", status).With("remote", msg)
	}
}

// remoteMessage extracts a readable message from a JSON:API or Zenodo error
// body, bounded and stripped of control characters.
func remoteMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
		Errors  []struct {
			Title   string `json:"title"`
			Message string `json:"message"`
			Field   string `json:"field"`
			Source  string `json:"source"`
		} `json:"errors"`
	}
	var parts []string
	if json.Unmarshal(body, &e) == nil {
		if e.Message != "" {
			parts = append(parts, e.Message)
		}
		for _, x := range e.Errors {
			m := x.Title + x.Message
			if f := x.Field + x.Source; f != "" {
				m = f + ": " + m
			}
			parts = append(parts, m)
		}
	}
	s := strings.Join(parts, "; ")
	if s == "" {
		s = string(body)
	}
	return bound(s, 500)
}

func bound(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if len(s) > n {
		s = s[:n]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}

// scrub removes userinfo from any URL quoted in a message.
func scrub(s string) string {
	for _, scheme := range []string{"https://", "http://"} {
		i := 0
		for {
			j := strings.Index(s[i:], scheme)
			if j < 0 {
				break
			}
			start := i + j + len(scheme)
			end := start + strings.IndexAny(s[start:]+" ", " /\"'")
			if at := strings.LastIndex(s[start:end], "@"); at >= 0 {
				s = s[:start] + "***@" + s[start+at+1:]
			}
			i = start
		}
	}
	return s
}

func jsonBody(v any) (io.Reader, int64, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, 0, fmt.Errorf("encode request: %w", err)
	}
	return bytes.NewReader(b), int64(len(b)), nil
}
