package zotero_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/plugins/refmgr/zotero"
	"github.com/strata-archaeo/strata/plugins/refmgr/zotero/zoterotest"
)

func TestAuthorYear(t *testing.T) {
	for _, c := range []struct {
		item zotero.Item
		want string
	}{
		{zotero.Item{Data: zotero.ItemData{Date: "March 1985", Creators: []zotero.Creator{{LastName: "Carandini", FirstName: "Andrea"}}}}, "Carandini 1985"},
		{zotero.Item{Data: zotero.ItemData{Date: "n.d.", Creators: []zotero.Creator{{Name: "British Museum"}}}}, "British Museum"},
		{zotero.Item{Data: zotero.ItemData{Date: "2001-05-02", Title: "Untitled"}}, "2001"},
		{zotero.Item{Data: zotero.ItemData{Title: "Only a title", Creators: []zotero.Creator{{}}}}, "Only a title"},
		{zotero.Item{}, "Unknown"},
	} {
		if got := zotero.AuthorYear(c.item); got != c.want {
			t.Errorf("%+v: %q, want %q", c.item.Data, got, c.want)
		}
	}
}

// TestRateLimits: a Backoff header holds the next request back; a hold
// longer than MaxWait fails at once, without a request; a 429 is a
// RateLimitError with its Retry-After.
func TestRateLimits(t *testing.T) {
	f := zoterotest.New(t)
	f.AddLibrary("group", "7", "G", "")
	f.PutItem("group", "7", "ABCD2345", "Mary Beard", "2008", "Pompeii")
	lib := zotero.Library{Type: "group", ID: "7"}
	c := &zotero.Client{Base: f.URL, HTTP: http.DefaultClient, Throttle: &zotero.Throttle{MaxWait: 3 * time.Second}}
	ctx := context.Background()

	f.SetBackoff(1)
	if _, err := c.Items(ctx, lib, []string{"ABCD2345"}); err != nil {
		t.Fatal(err)
	}
	f.SetBackoff(0)
	start := time.Now()
	if _, err := c.Citation(ctx, lib, "ABCD2345", ""); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("Backoff: 1 not honoured (next request after %s)", d)
	}

	f.RateLimit("ABCD2345", 10)
	var rl *zotero.RateLimitError
	if _, err := c.Citation(ctx, lib, "ABCD2345", "apa"); !errors.As(err, &rl) || rl.RetryAfter != 10*time.Second {
		t.Fatalf("429: %v", err)
	}
	n := len(f.Requests())
	if _, err := c.Items(ctx, lib, []string{"ABCD2345"}); !errors.As(err, &rl) || len(f.Requests()) != n {
		t.Fatalf("within Retry-After, beyond MaxWait: %v (%d requests sent)", err, len(f.Requests())-n)
	}
}

func TestBatchesAndErrors(t *testing.T) {
	f := zoterotest.New(t)
	f.AddLibrary("user", "9", "Mine", "k")
	keys := make([]string, 120)
	for i := range keys {
		keys[i] = fmt.Sprintf("KEY%05d", i)
		if i%2 == 0 {
			f.PutItem("user", "9", keys[i], "A B", "2000", "T")
		}
	}
	c := &zotero.Client{Base: f.URL}
	got, err := c.Items(context.Background(), zotero.Library{Type: "user", ID: "9", APIKey: "k"}, keys)
	if err != nil || len(got) != 60 {
		t.Fatalf("items: %d, %v", len(got), err)
	}
	if b := f.Batches(); len(b) != 3 || b[0] != 50 || b[1] != 50 || b[2] != 20 {
		t.Fatalf("batches: %v", b)
	}
	if _, err := c.Batch(context.Background(), zotero.Library{Type: "user", ID: "9", APIKey: "k"}, keys[:51]); err == nil {
		t.Fatal("51 keys in one request")
	}
	if _, err := c.Search(context.Background(), zotero.Library{Type: "user", ID: "9"}, "x", 5); !errors.Is(err, zotero.ErrNotFound) {
		t.Fatalf("private library without key: %v", err)
	}
	if _, err := c.Search(context.Background(), zotero.Library{Type: "user", ID: "9", APIKey: "wrong"}, "x", 5); !errors.Is(err, zotero.ErrForbidden) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := c.Citation(context.Background(), zotero.Library{Type: "user", ID: "9", APIKey: "k"}, "KEY00001", ""); !errors.Is(err, zotero.ErrNotFound) {
		t.Fatalf("missing item: %v", err)
	}
}
