// Package errs defines the typed error that domain packages return. A domain
// package says what kind of failure happened and which stable code names it;
// the HTTP layer alone decides the status code (see server.statusOf).
package errs

import (
	"errors"
	"fmt"
	"maps"
)

// Kind classifies a failure independently of any transport.
type Kind int

const (
	Internal           Kind = iota // a bug or an unexpected infrastructure failure
	Invalid                        // the caller sent bad input
	Unauthenticated                // missing, bad or expired credential
	Forbidden                      // authenticated, but not allowed
	NotFound                       // the named thing does not exist
	MethodNotAllowed               // the path exists for other methods
	Conflict                       // the request clashes with existing state
	TooLarge                       // the body exceeds the configured cap
	Locked                         // the resource is temporarily locked
	BadGateway                     // an upstream service failed
	Unavailable                    // a dependency is not configured or down
	Timeout                        // a dependency did not answer in time
	ClientTimeout                  // the client did not send its request in time
	PreconditionFailed             // a condition of the request (If-Match) does not hold
	TooManyRequests                // a rate limit was reached; retry later
	Gone                           // the thing existed and was withdrawn
)

// Error is a failure with a stable machine-readable code. Message is safe to
// show to the caller; Err (never shown) keeps the underlying cause for logs.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Extra   map[string]any
	Err     error
}

// New returns an Error of the given kind and code.
func New(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message}
}

// Newf is New with a formatted message.
func Newf(kind Kind, code, format string, args ...any) *Error {
	return New(kind, code, fmt.Sprintf(format, args...))
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// With returns a copy of e carrying an extra key in the response body.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Extra = maps.Clone(e.Extra)
	if c.Extra == nil {
		c.Extra = map[string]any{}
	}
	c.Extra[key] = value
	return &c
}

// Wrap returns a copy of e that records cause for the logs.
func (e *Error) Wrap(cause error) *Error {
	c := *e
	c.Err = cause
	return &c
}

// Is lets errors.Is match two Errors by code, so sentinel values work.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Code == e.Code
}

// As extracts an *Error from err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// CodeOf returns the code of err, or "internal_error" when it carries none.
func CodeOf(err error) string {
	if e, ok := As(err); ok {
		return e.Code
	}
	return "internal_error"
}
