package pluginsdk_test

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/pluginsdk"
)

func TestWriteHostError(t *testing.T) {
	for _, c := range []struct {
		err        error
		status     int
		code       string
		unexpected bool
	}{
		{fmt.Errorf("query: %w", pluginsdk.ErrNoHost), 503, "plugin_unavailable", false},
		{status.Error(codes.PermissionDenied, "no"), 403, "not_enough_privilege", false},
		{status.Error(codes.NotFound, "gone"), 404, "not_found", false},
		{status.Error(codes.InvalidArgument, "bad"), 400, "invalid_request", false},
		{status.Error(codes.DeadlineExceeded, "slow"), 504, "timeout", false},
		{status.Error(codes.Internal, "secret detail"), 502, "host_error", true},
		{errors.New("plain"), 502, "host_error", true},
		// The server's own code travels as an ErrorInfo reason: kept.
		{fmt.Errorf("add geodata: %w", withReason(codes.NotFound, "record_not_found")), 404, "record_not_found", false},
		{withReason(codes.InvalidArgument, "geodata_not_enabled"), 400, "geodata_not_enabled", false},
		{withReason(codes.PermissionDenied, "not_your_record"), 403, "not_your_record", false},
	} {
		rec := httptest.NewRecorder()
		got := pluginsdk.WriteHostError(rec, c.err)
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), `"code":"`+c.code+`"`) || (got != nil) != c.unexpected {
			t.Errorf("%v: %d %s, returned %v", c.err, rec.Code, rec.Body.String(), got)
		}
		if strings.Contains(rec.Body.String(), "secret detail") {
			t.Errorf("an unexpected error's detail reached the client: %s", rec.Body.String())
		}
	}
}

// withReason is a Host error as the server sends it: its code as the
// ErrorInfo reason in pluginsdk's domain.
func withReason(c codes.Code, reason string) error {
	st, err := status.New(c, reason+": detail").WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: pluginsdk.ErrorDomain})
	if err != nil {
		panic(err)
	}
	return st.Err()
}
