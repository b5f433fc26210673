// Package server is the HTTP face of Strata: the gin engine, the route
// table, the middleware chain (recovery, logging, body cap, application
// resolver) and the JSON envelope every response uses. Handlers parse and
// check input, call one domain function and write JSON; the mapping from
// domain errors to HTTP status lives in the kit alone (api.StatusOf).
package server
