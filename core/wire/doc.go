// Package wire is the one place where input from clients becomes Go values.
//
// Existing BraDypUS clients send booleans as "1", numbers as "12" and an
// empty string for "no value"; scripts send proper JSON. Every handler
// decodes its body with Decode, and every query-string or form value that
// is a number or a flag goes through Bool, Int or Float, so that all routes
// accept the same forms and refuse the same mistakes, with messages in the
// API's words ("order must be an integer, not text") and never a Go type
// name.
package wire
