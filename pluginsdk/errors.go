package pluginsdk

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error is a failure caused by the client's input, with a stable code the
// client sees: the server answers it as 400 {"status":"error","code":Code,
// "message":Message}. Return one from ResolveFilter for a bad operand
// ("invalid_filter"), or from any call whose input the plugin refuses. Any
// other error is a failure of the plugin: the client gets a generic error
// and the server logs the detail.
type Error struct {
	Code    string
	Message string
}

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// ErrorDomain marks the gRPC error details written by this SDK.
const ErrorDomain = "strata.plugin.v1"

// reasonPanic is the ErrorInfo reason of a recovered panic.
const reasonPanic = "plugin_panic"

// How errors cross gRPC (the server side reads them with ErrorFromStatus
// and IsPanic):
//   - *Error: InvalidArgument, with an ErrorInfo{Reason: Code, Domain: ErrorDomain};
//   - a recovered panic: Internal, with an ErrorInfo{Reason: "plugin_panic"};
//   - context errors: DeadlineExceeded or Canceled;
//   - anything else: Unknown, with the error's text.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	var pe *Error
	switch {
	case errors.As(err, &pe):
		return withReason(codes.InvalidArgument, pe.Message, pe.Code)
	case errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded:
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled:
		return status.Error(codes.Canceled, err.Error())
	}
	// A failed Host call wrapped by the plugin is a plugin failure too: its
	// gRPC code is not passed on, so that only *Error reaches the client.
	return status.Error(codes.Unknown, err.Error())
}

func withReason(code codes.Code, msg, reason string) error {
	st := status.New(code, msg)
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: ErrorDomain}); err == nil {
		st = d
	}
	return st.Err()
}

func panicStatus(v any) error {
	return withReason(codes.Internal, fmt.Sprintf("plugin panicked: %v", v), reasonPanic)
}

func reasonOf(err error) (string, *status.Status) {
	st, ok := status.FromError(err)
	if !ok {
		return "", nil
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Domain == ErrorDomain {
			return info.Reason, st
		}
	}
	return "", st
}

// ErrorFromStatus returns the *Error a plugin returned, from the gRPC error
// the server (or plugintest) received; ok is false for any other error.
func ErrorFromStatus(err error) (e *Error, ok bool) {
	reason, st := reasonOf(err)
	if st == nil || st.Code() != codes.InvalidArgument || reason == "" {
		return nil, false
	}
	return &Error{Code: reason, Message: st.Message()}, true
}

// IsPanic reports whether a gRPC error is a panic the plugin recovered from
// (a bug in the plugin; the process is still running).
func IsPanic(err error) bool {
	reason, st := reasonOf(err)
	return st != nil && st.Code() == codes.Internal && reason == reasonPanic
}
