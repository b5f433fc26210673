// Package api is the kit every HTTP area of Strata is written with: the
// Route row an area lists in its route table, the JSON envelope (Success,
// Fail), the one liberal body reader (Bind), what the server's middleware
// resolved for a request (App, Actor, Level) and the Host an area asks for
// what only the server can build (a caller's records scope, the catalog).
//
// An area (core/files/filesapi, core/jobs, ...) is a package with a
// Routes(h Host) []Route function; core/server mounts the rows with the
// middleware their Scope and Access name and grows none of their logic.
package api
