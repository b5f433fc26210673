package pluginsdk_test

import (
	"encoding/json"
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

// A Host error as a plugin returns it (wrapped by the SDK's Host client,
// "query records: ...", and perhaps by the plugin) reaches the client as
// the server's code and message: no rpc framing, no wrapping text, the
// code not repeated in the message.
func TestWriteHostErrorClean(t *testing.T) {
	for _, c := range []struct {
		err     error
		status  int
		code    string
		message string
	}{
		{fmt.Errorf("query records: %w", withReason(codes.PermissionDenied, "not_enough_privilege")), 403, "not_enough_privilege", "detail"},
		{fmt.Errorf("summary: %w", fmt.Errorf("query records: %w", withReason(codes.NotFound, "table_not_found"))), 404, "table_not_found", "detail"},
		{fmt.Errorf("query records: %w", withReason(codes.InvalidArgument, "invalid_filter")), 400, "invalid_filter", "detail"},
		{fmt.Errorf("write system rows: %w", withReason(codes.AlreadyExists, "duplicate")), 409, "duplicate", "detail"},
		{fmt.Errorf("query records: %w", withReason(codes.Unavailable, "database_busy")), 503, "database_busy", "detail"},
		// Without the server's code: the generic one and the bare message.
		{fmt.Errorf("query records: %w", status.Error(codes.PermissionDenied, "no access")), 403, "not_enough_privilege", "no access"},
		{fmt.Errorf("query records: %w", status.Error(codes.Unavailable, "transport is closing")), 503, "host_unavailable", "the server is busy or unavailable; try again"},
		{fmt.Errorf("open: %w", status.Error(codes.FailedPrecondition, "not yet")), 409, "conflict", "not yet"},
	} {
		rec := httptest.NewRecorder()
		if got := pluginsdk.WriteHostError(rec, c.err); got != nil {
			t.Errorf("%v: returned %v", c.err, got)
		}
		var body struct{ Status, Code, Message string }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%v: %s", c.err, rec.Body.String())
		}
		if rec.Code != c.status || body.Status != "error" || body.Code != c.code || body.Message != c.message {
			t.Errorf("%v: %d %s, want %d %s %q", c.err, rec.Code, rec.Body.String(), c.status, c.code, c.message)
		}
		for _, framing := range []string{"rpc error", "desc =", "code =", "query records", "summary:"} {
			if strings.Contains(rec.Body.String(), framing) {
				t.Errorf("%v: the answer shows %q: %s", c.err, framing, rec.Body.String())
			}
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
