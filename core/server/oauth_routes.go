package server

// oauthRoutes are the OAuth 2.0 flows with the two identity providers
// (SPEC §3.3, §5.5; CONTRACT §3, §8).
func (s *Server) oauthRoutes() []Route {
	return nil
}
