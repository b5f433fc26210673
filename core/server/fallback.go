package server

import (
	"errors"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

var (
	errRouteNotFound       = errs.New(errs.NotFound, "route_not_found", "no such route")
	errAppPrefixRequired   = errs.New(errs.NotFound, "app_prefix_required", "this route is application-scoped: call /<app>/api/...")
	errAppPrefixNotAllowed = errs.New(errs.NotFound, "app_prefix_not_allowed", "this route is instance-wide: call /api/... without an application prefix")
	errMethodNotAllowed    = errs.New(errs.MethodNotAllowed, "method_not_allowed", "the route does not accept this method")
)

// fallback answers every request no route matched: the web application's
// pages and assets, else a JSON error:
// an unknown application, a path missing or wrongly carrying the application
// prefix, a method the path does not accept, or an unknown route.
func (s *Server) fallback(c *gin.Context) {
	if s.webui.Serve(c.Writer, c.Request) {
		return // a page or an asset of the web application (core/webui)
	}
	path := c.Request.URL.Path
	segs := strings.Split(strings.Trim(path, "/"), "/")

	switch {
	case len(segs) >= 1 && segs[0] == "api":
		rest := strings.TrimPrefix(path, "/api")
		if allowed := s.allowedMethods(Instance, rest); len(allowed) > 0 {
			s.methodNotAllowed(c, allowed)
			return
		}
		if s.isAppRoutePath(rest) {
			s.fail(c, errAppPrefixRequired)
			return
		}
	case len(segs) >= 2 && segs[1] == "api":
		rest := strings.TrimPrefix(path, "/"+segs[0]+"/api")
		if len(s.allowedMethods(Instance, rest)) > 0 {
			s.fail(c, errAppPrefixNotAllowed)
			return
		}
		if _, err := s.apps.Get(c.Request.Context(), segs[0]); err != nil {
			if !errors.Is(err, store.ErrAppNotFound) {
				s.fail(c, err)
				return
			}
			s.fail(c, store.ErrAppNotFound)
			return
		}
		if allowed := s.allowedMethods(App, rest); len(allowed) > 0 {
			s.methodNotAllowed(c, allowed)
			return
		}
	default:
		if allowed := s.allowedMethods(Root, path); len(allowed) > 0 {
			s.methodNotAllowed(c, allowed)
			return
		}
	}
	s.fail(c, errRouteNotFound)
}

func (s *Server) methodNotAllowed(c *gin.Context, allowed []string) {
	c.Header("Allow", strings.Join(allowed, ", "))
	s.fail(c, errMethodNotAllowed.With("allowed", allowed))
}

// allowedMethods lists the methods of routes in scope whose pattern matches
// path (relative to the scope's prefix).
func (s *Server) allowedMethods(scope Scope, path string) []string {
	seen := map[string]bool{}
	for _, r := range s.routes {
		if r.Scope == scope && matchPattern(r.Path, path) {
			seen[r.Method] = true
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// isAppRoutePath reports whether a bare /api path names an app-scoped
// route. Record paths count even before every record route exists, since
// SPEC §4.1 fixes their answer.
func (s *Server) isAppRoutePath(rest string) bool {
	if rest == "/records" || strings.HasPrefix(rest, "/records/") || strings.HasPrefix(rest, "/record/") {
		return true
	}
	for _, r := range s.routes {
		if r.Scope == App && matchPattern(r.Path, rest) {
			return true
		}
	}
	return false
}

// matchPattern matches a gin-style pattern (":name" one segment, "*name"
// the rest) against a path, exactly as gin would: a trailing slash counts.
func matchPattern(pattern, path string) bool {
	ps := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	xs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, p := range ps {
		if strings.HasPrefix(p, "*") {
			return true
		}
		if i >= len(xs) {
			return false
		}
		if strings.HasPrefix(p, ":") {
			if xs[i] == "" {
				return false
			}
			continue
		}
		if p != xs[i] {
			return false
		}
	}
	return len(ps) == len(xs)
}
