package pluginsdk

import (
	"errors"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// WriteHostError answers a route whose Host call failed. The Host's gRPC
// code says whose fault it was: the caller's rights (403), a missing
// record or table (404), a bad request (400), a slow server (504), or no
// Host yet (503). The server's own code (record_not_found,
// geodata_not_enabled, …) is kept when it sent one. Anything else is the
// server's: it is answered 502 without detail and returned, so the plugin
// can log it; otherwise nil.
func WriteHostError(w http.ResponseWriter, err error) (unexpected error) {
	if errors.Is(err, ErrNoHost) {
		WriteError(w, http.StatusServiceUnavailable, "plugin_unavailable", "the plugin is not connected to the server yet")
		return nil
	}
	st, _ := status.FromError(err)
	reason, _ := reasonOf(err)
	code := func(generic string) string {
		if reason != "" {
			return reason
		}
		return generic
	}
	switch st.Code() {
	case codes.PermissionDenied:
		WriteError(w, http.StatusForbidden, code("not_enough_privilege"), st.Message())
	case codes.NotFound:
		WriteError(w, http.StatusNotFound, code("not_found"), st.Message())
	case codes.InvalidArgument:
		WriteError(w, http.StatusBadRequest, code("invalid_request"), st.Message())
	case codes.DeadlineExceeded, codes.Canceled:
		WriteError(w, http.StatusGatewayTimeout, "timeout", "the server did not answer the plugin in time")
	default:
		WriteError(w, http.StatusBadGateway, "host_error", "the plugin could not read the data it needs")
		return err
	}
	return nil
}
