package pluginsdk

import (
	"errors"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// WriteHostError answers a route whose Host call failed, with a JSON error
// the client can act on and never the gRPC framing ("query records: rpc
// error: code = ... desc = ..."): the message is the server's own, as it
// would answer the call itself. The Host's gRPC code says whose fault it
// was: the caller's rights (403), a missing record or table (404), a bad
// request (400), a conflict (409), a busy or absent server (503, or no
// Host yet), a slow one (504). The server's own code (record_not_found,
// not_enough_privilege, geodata_not_enabled, …) is kept when it sent one;
// otherwise a stable generic code per status. Anything else is the
// server's failure: it is answered 502 without detail and returned, so the
// plugin can log it; otherwise nil.
func WriteHostError(w http.ResponseWriter, err error) (unexpected error) {
	if errors.Is(err, ErrNoHost) {
		WriteError(w, http.StatusServiceUnavailable, "plugin_unavailable", "the plugin is not connected to the server yet")
		return nil
	}
	st := hostStatus(err)
	reason, _ := reasonOf(st.Err())
	msg := st.Message()
	if reason != "" {
		// The server writes "<code>: <message>"; the code goes in the
		// envelope's own field.
		msg = strings.TrimPrefix(msg, reason+": ")
	}
	var httpStatus int
	var generic string
	switch st.Code() {
	case codes.PermissionDenied, codes.Unauthenticated:
		httpStatus, generic = http.StatusForbidden, "not_enough_privilege"
	case codes.NotFound:
		httpStatus, generic = http.StatusNotFound, "not_found"
	case codes.InvalidArgument, codes.OutOfRange:
		httpStatus, generic = http.StatusBadRequest, "invalid_request"
	case codes.AlreadyExists, codes.Aborted, codes.FailedPrecondition:
		httpStatus, generic = http.StatusConflict, "conflict"
	case codes.Unavailable, codes.ResourceExhausted:
		httpStatus, generic = http.StatusServiceUnavailable, "host_unavailable"
		if reason == "" {
			msg = "the server is busy or unavailable; try again"
		}
	case codes.DeadlineExceeded, codes.Canceled:
		WriteError(w, http.StatusGatewayTimeout, "timeout", "the server did not answer the plugin in time")
		return nil
	default:
		WriteError(w, http.StatusBadGateway, "host_error", "the plugin could not read the data it needs")
		return err
	}
	code := generic
	if reason != "" {
		code = reason
	}
	if strings.TrimSpace(msg) == "" {
		msg = strings.ReplaceAll(code, "_", " ")
	}
	WriteError(w, httpStatus, code, msg)
	return nil
}

// hostStatus is the gRPC status inside err, however the plugin wrapped it:
// status.FromError on a wrapped error puts the whole wrapped text (the
// plugin's prefixes and the rpc framing) in the message, which is not for
// clients.
func hostStatus(err error) *status.Status {
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		if st := se.GRPCStatus(); st != nil {
			return st
		}
	}
	return status.New(codes.Unknown, err.Error())
}
