package server

import "net/http"

// RouteAccess lists every route of s as method, full path and the
// privilege it requires (its name, auth.Access.String).
func RouteAccess(s *Server) [][3]string {
	out := make([][3]string, len(s.routes))
	for i, r := range s.routes {
		out[i] = [3]string{r.Method, r.FullPath(), r.Access.String()}
	}
	return out
}

// WatchScopes makes s tell fn of every table a request asks the records
// gate about (recordScope).
func WatchScopes(s *Server, fn func(r *http.Request, table string)) { s.scopeWatch = fn }

// RoutePaths lists every route of s as method and full path (":app",
// ":tb" ... left in), for tests that walk the whole route table.
func RoutePaths(s *Server) [][2]string {
	out := make([][2]string, len(s.routes))
	for i, r := range s.routes {
		out[i] = [2]string{r.Method, r.FullPath()}
	}
	return out
}
