package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/errs"
)

func serve(t *testing.T, body string, h gin.HandlerFunc) (*httptest.ResponseRecorder, *gin.Context) {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	w := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(w)
	c.Request = httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(body))
	h(c)
	return w, c
}

func TestFail(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		status     int
		code       string
		logged     bool
		retryAfter string
	}{
		{"coded", errs.New(errs.NotFound, "record_not_found", "no such record").With("id", 4), 404, "record_not_found", false, ""},
		{"uncoded is internal and logged", errors.New("pq: secret detail"), 500, "internal_error", true, ""},
		{"rate limited carries Retry-After", errs.New(errs.TooManyRequests, "rate_limited", "slow down").With("retry_after", 7), 429, "rate_limited", false, "7"},
		{"too large", ErrTooLarge.With("limit", 10), 413, "too_large", false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, c := serve(t, "", func(c *gin.Context) { Fail(c, tc.err) })
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d", w.Code, tc.status)
			}
			var body map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body["status"] != "error" || body["code"] != tc.code {
				t.Fatalf("body %v", body)
			}
			if strings.Contains(w.Body.String(), "secret") {
				t.Fatalf("internal detail leaked: %s", w.Body)
			}
			if got := len(c.Errors) > 0; got != tc.logged {
				t.Fatalf("attached for the log: %v, want %v", got, tc.logged)
			}
			if got := w.Header().Get("Retry-After"); got != tc.retryAfter {
				t.Fatalf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			if !c.IsAborted() {
				t.Fatal("chain not aborted")
			}
		})
	}
}

func TestBind(t *testing.T) {
	type target struct {
		Flag  bool  `json:"flag"`
		Count int64 `json:"count"`
	}
	cases := []struct {
		name, body string
		want       target
		code       string
	}{
		{"liberal", `{"flag":"1","count":"12"}`, target{true, 12}, ""},
		{"plain", `{"flag":false,"count":3}`, target{false, 3}, ""},
		{"wrong type names the field", `{"count":"many"}`, target{}, "invalid_json"},
		{"not JSON", `{`, target{}, "invalid_json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got target
			var err error
			serve(t, tc.body, func(c *gin.Context) { err = Bind(c, &got) })
			if tc.code == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			e, ok := errs.As(err)
			if !ok || e.Code != tc.code {
				t.Fatalf("err %v, want code %s", err, tc.code)
			}
		})
	}
}

func TestParseID(t *testing.T) {
	cases := []struct {
		in   any
		want int64
		bad  bool
	}{
		{nil, 0, false}, {"", 0, false}, {" 12 ", 12, false}, {json.Number("7"), 7, false},
		{float64(3), 3, false}, {float64(2.5), 0, true}, {"-1", 0, true}, {"x", 0, true}, {true, 0, true},
	}
	for _, tc := range cases {
		got, err := ParseID(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseID(%#v) = %d, %v", tc.in, got, err)
		}
	}
}
