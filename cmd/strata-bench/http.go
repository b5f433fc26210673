package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// httpError is an answer outside 2xx.
type httpError struct {
	method, url string
	status      int
	body        string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.method, e.url, e.status, e.body)
}

// call sends one request with a JSON body (when in is not nil) and, on a 2xx
// answer, decodes the body into out (when not nil). The body is always read
// to the end, so the connection is reused and the timing includes it.
func call(ctx context.Context, hc *http.Client, method, url, auth string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if len(b) > 300 {
			b = append(b[:300], "..."...)
		}
		return &httpError{method, url, resp.StatusCode, string(b)}
	}
	// Every answer of both servers is a JSON object or array: a 2xx without
	// one (an empty body, say) is no success.
	if t := bytes.TrimSpace(b); len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return fmt.Errorf("%s %s: %d answered without a JSON body (%d bytes)", method, url, resp.StatusCode, len(b))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decoding the answer: %w", method, url, err)
		}
	}
	return nil
}

// idString reads an id answered as a JSON number or string.
func idString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
