package oauth

import (
	"net/http"
	"net/url"
	"strings"
)

// NormalizeOrigin returns the canonical form of a client origin (the base
// address the front end runs at, to which `/oauth-callback` is appended):
// an http or https URL with a host, no user info, query or fragment, the
// scheme and host in lower case, the scheme's default port dropped, and no
// trailing slash on the path. ok is false for anything else, so a value
// that merely starts like an allowed origin ("https://app.example.org.evil"
// or "https://app.example.org@evil") never compares equal to one.
func NormalizeOrigin(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.ContainsAny(raw, "\\ \t\r\n") {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.RawFragment != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", false
	}
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6 literal
	}
	if port != "" {
		host += ":" + port
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	return scheme + "://" + host + path, true
}

// RequestScheme is the scheme the client used: the first token of
// X-Forwarded-Proto when present (a proxy terminated TLS), else that of the
// direct connection (SPEC §5.5).
func RequestScheme(r *http.Request) string {
	if v := r.Header.Get("X-Forwarded-Proto"); v != "" {
		first, _, _ := strings.Cut(v, ",")
		switch p := strings.ToLower(strings.TrimSpace(first)); p {
		case "http", "https":
			return p
		}
	}
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// RequestOrigin is the scheme and host the request came to.
func RequestOrigin(r *http.Request) string { return RequestScheme(r) + "://" + r.Host }

// ServiceBase is the service's own public base address: publicURL
// (SERVICE_PUBLIC_URL) when set, else the scheme and host the request came
// to. The redirect address registered with a provider and the fallback
// target of an untrustworthy callback are both built on it.
func ServiceBase(r *http.Request, publicURL string) string {
	if publicURL != "" {
		if o, ok := NormalizeOrigin(publicURL); ok {
			return o
		}
	}
	if o, ok := NormalizeOrigin(RequestOrigin(r)); ok {
		return o
	}
	return RequestOrigin(r)
}

// RedirectURL is the callback address of provider for app, as registered
// with the provider (SPEC §5.5: per application).
func RedirectURL(base, app, provider string) string {
	return base + "/" + url.PathEscape(app) + "/api/auth/oauth/" + url.PathEscape(provider) + "/callback"
}

// AllowedOrigins is the set a client origin must belong to (CONTRACT §8,
// issue 11): the service's own origin and the app's own list. The own
// origin is SERVICE_PUBLIC_URL when it is set — then the request's Host and
// X-Forwarded-* headers, which any client can forge, never make an origin
// trusted — and only without it the scheme and host the request came to.
// Entries are normalised; malformed ones dropped.
func AllowedOrigins(r *http.Request, publicURL string, appOrigins []string) map[string]bool {
	set := map[string]bool{}
	for _, raw := range append([]string{ServiceBase(r, publicURL)}, appOrigins...) {
		if o, ok := NormalizeOrigin(raw); ok {
			set[o] = true
		}
	}
	return set
}

// CallbackURL is `{origin}/oauth-callback?k1=v1&k2=v2...` with every
// parameter URL-encoded, in the order given (the order of SPEC §5.5, which
// people read in logs and browser bars; parsers do not care). kv alternates
// keys and values; pairs with an empty value are left out.
func CallbackURL(origin string, kv ...string) string {
	var b strings.Builder
	b.WriteString(origin)
	b.WriteString("/oauth-callback")
	sep := "?"
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		b.WriteString(sep)
		b.WriteString(url.QueryEscape(kv[i]))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(kv[i+1]))
		sep = "&"
	}
	return b.String()
}
