// Package httpenc chooses a response's content coding from a request's
// Accept-Encoding (RFC 9110 §12.5.3), for the web application's
// precompressed assets (core/webui) and the server's compressed answers
// (core/server).
package httpenc

import (
	"strconv"
	"strings"
)

// Negotiate returns the coding of offers (in the server's order of
// preference, e.g. "br", "gzip") the client prefers, or "" for identity.
// A coding the header names with q=0 is refused; one it does not name
// takes the q of "*" if present, else is refused; identity is acceptable
// unless named, or covered by "*", with q=0. On equal q the server's
// order wins, and any offered coding wins over identity. An absent or
// malformed header gives identity: nothing is sent that the client may
// not read.
func Negotiate(acceptEncoding string, offers ...string) string {
	if strings.TrimSpace(acceptEncoding) == "" {
		return ""
	}
	named := map[string]float64{}
	star := -1.0
	for _, part := range strings.Split(acceptEncoding, ",") {
		coding, q, ok := parse(part)
		if !ok {
			continue
		}
		if coding == "*" {
			star = q
			continue
		}
		if coding == "x-gzip" {
			coding = "gzip"
		}
		if old, seen := named[coding]; !seen || q > old {
			named[coding] = q
		}
	}
	qOf := func(coding string) float64 {
		if q, ok := named[coding]; ok {
			return q
		}
		return star
	}
	best, bestQ := "", 0.0
	for _, o := range offers {
		if q := qOf(o); q > bestQ {
			best, bestQ = o, q
		}
	}
	identity := 1.0
	if q, ok := named["identity"]; ok {
		identity = q
	} else if star >= 0 {
		identity = star
	}
	if best == "" || identity > bestQ {
		return ""
	}
	return best
}

// parse reads one element "coding;q=0.5"; ok is false for an empty or
// malformed one, which is then ignored.
func parse(s string) (coding string, q float64, ok bool) {
	coding, params, _ := strings.Cut(s, ";")
	coding = strings.ToLower(strings.TrimSpace(coding))
	if coding == "" {
		return "", 0, false
	}
	q = 1
	for p := range strings.SplitSeq(params, ";") {
		k, v, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 || f > 1 {
			return "", 0, false
		}
		q = f
	}
	return coding, q, true
}
