package server

// RoutePaths lists every route of s as method and full path (":app",
// ":tb" ... left in), for tests that walk the whole route table.
func RoutePaths(s *Server) [][2]string {
	out := make([][2]string, len(s.routes))
	for i, r := range s.routes {
		out[i] = [2]string{r.Method, r.FullPath()}
	}
	return out
}
