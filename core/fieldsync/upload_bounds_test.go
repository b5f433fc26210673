package fieldsync_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestUploadBoundsAndRetention: one account's open uploads are bounded in
// number (50) and in the bytes they declare (16 times the upload cap), with
// their codes; a finished upload frees its place; uploads untouched for 7
// days are removed with their parts, which frees the bounds again.
func TestUploadBoundsAndRetention(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		var skew atomic.Int64 // how far the server's clock is ahead
		clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		const max = 64 << 10
		d := newDig(t, e, server.Deps{Now: clock}, func(c *config.Config) { c.MaxUploadBytes = max })
		// API keys: sessions would expire when the clock moves on.
		big, small := testenv.NewAPIKey(t, d.app, auth.Writer), testenv.NewAPIKey(t, d.app, auth.Writer)
		find := d.create(t, big, "finds", `{"label":"bounds"}`)
		start := func(who, id string, size int) (int, map[string]any) {
			return d.do(t, who, "POST", uploads, fmt.Sprintf(`{"upload_id":%q,"device_id":"d","filename":"f.bin","size":%d,"table":"finds","id":%d}`, id, size, find))
		}
		for i := range 16 {
			if code, m := start(big, fmt.Sprintf("big-%d", i), max); code != 200 {
				t.Fatalf("upload %d: %d %v", i, code, m)
			}
		}
		d.putOK(t, big, "big-0", 0, make([]byte, 1000))
		if code, m := start(big, "big-16", 1); code != 413 || m["code"] != "upload_quota_exceeded" {
			t.Fatalf("past the staged bytes: %d %v", code, m)
		}
		for i := range 50 {
			if code, m := start(small, fmt.Sprintf("small-%d", i), 1); code != 200 {
				t.Fatalf("upload %d: %d %v", i, code, m)
			}
		}
		if code, m := start(small, "small-50", 1); code != 409 || m["code"] != "too_many_open_uploads" {
			t.Fatalf("past the open uploads: %d %v", code, m)
		}
		// Another account's bounds are its own.
		if code, m := start(d.writer, "w-1", max); code != 200 {
			t.Fatalf("another account: %d %v", code, m)
		}
		// A finished upload is no longer open.
		if u := d.putOK(t, small, "small-0", 0, []byte("x")); u["status"] != "linked" {
			t.Fatalf("small-0: %v", u)
		}
		if code, m := start(small, "small-50", 1); code != 200 {
			t.Fatalf("after one finished: %d %v", code, m)
		}
		if d.count(t, "sync_upload_parts") == 0 {
			t.Fatal("big-0's part is not kept")
		}

		// Six days on, a part keeps big-1 alive; eight days on, every
		// other upload is abandoned and the next start removes them.
		skew.Store(int64(6 * 24 * time.Hour))
		d.putOK(t, big, "big-1", 0, []byte("still here"))
		skew.Store(int64(8 * 24 * time.Hour))
		if code, m := start(big, "big-new", max); code != 200 {
			t.Fatalf("start after the retention: %d %v", code, m)
		}
		for _, c := range []struct{ who, id string }{{big, "big-0"}, {small, "small-0"}, {small, "small-50"}} {
			if code, m := d.do(t, c.who, "GET", uploads+"/"+c.id, ""); code != 404 || m["code"] != "upload_not_found" {
				t.Fatalf("%s after the retention: %d %v", c.id, code, m)
			}
		}
		if st := d.state(t, big, "big-1"); num(st["offset"]) != 10 {
			t.Fatalf("big-1: %v", st)
		}
		if n := d.count(t, "sync_uploads"); n != 2 {
			t.Fatalf("%d uploads left, want big-1 and big-new", n)
		}
		if n := d.count(t, "sync_upload_parts"); n != 1 {
			t.Fatalf("%d parts left, want big-1's", n)
		}
		for i := range 14 { // with big-1 and big-new, 16 again
			if code, m := start(big, fmt.Sprintf("again-%d", i), max); code != 200 {
				t.Fatalf("bounds freed, upload %d: %d %v", i, code, m)
			}
		}
	})
}
