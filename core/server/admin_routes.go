package server

// adminRoutes lists the user, table-privilege and API-key administration
// routes (CONTRACT §4).
func (s *Server) adminRoutes() []Route {
	return nil
}
