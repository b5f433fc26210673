package server

// signupRoutes are app properties, self-registration and password reset
// (SPEC §3.2, §3.4, §5.3, §5.4; CONTRACT §3).
func (s *Server) signupRoutes() []Route {
	return nil
}
