package server_test

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestSlowBodyIsCutOff: a client sending its body a byte at a time is
// answered 408 body_timeout once the body deadline passes, instead of
// holding the connection open.
func TestSlowBodyIsCutOff(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e, func(c *config.Config) { c.BodyTimeout = 300 * time.Millisecond })
		srv := httptest.NewServer(inst.Server)
		defer srv.Close()
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// A new-app body of 200 bytes, sent one byte every 100 ms.
		if _, err := conn.Write([]byte("POST /api/new-app HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{")); err != nil {
			t.Fatal(err)
		}
		done := make(chan *http.Response, 1)
		go func() {
			resp, _ := http.ReadResponse(bufio.NewReader(conn), nil)
			done <- resp
		}()
		start := time.Now()
		for {
			select {
			case resp := <-done:
				if resp == nil || resp.StatusCode != http.StatusRequestTimeout {
					t.Fatalf("answer %v, want 408", resp)
				}
				if d := time.Since(start); d > 3*time.Second {
					t.Errorf("cut off after %v", d)
				}
				return
			case <-time.After(100 * time.Millisecond):
				if time.Since(start) > 5*time.Second {
					t.Fatal("the slow body was never cut off")
				}
				_, _ = conn.Write([]byte(" "))
			}
		}
	})
}
