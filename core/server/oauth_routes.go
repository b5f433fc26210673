package server

import "net/http"

// oauthRoutes are the OAuth 2.0 flows with the two identity providers
// (SPEC §3.3, §5.5; CONTRACT §3, §8). All are public: they are how a
// session is obtained. The static link and register paths are POST, the
// {provider} paths GET, so they never compete for a match.
func (s *Server) oauthRoutes() []Route {
	return []Route{
		{Scope: App, Method: http.MethodGet, Path: "/auth/oauth/:provider/redirect", Handler: s.handleOAuthRedirect},
		{Scope: App, Method: http.MethodGet, Path: "/auth/oauth/:provider/callback", Handler: s.handleOAuthCallback},
		{Scope: App, Method: http.MethodPost, Path: "/auth/oauth/link", Handler: s.handleOAuthLink},
		{Scope: App, Method: http.MethodPost, Path: "/auth/oauth/register", Handler: s.handleOAuthRegister},
	}
}
