package realtime

import (
	"encoding/json"
	"testing"
	"time"
)

// TestEncodeIsMarshal: an event encoded once per record (encode) is, byte
// for byte, what json.Marshal makes of it.
func TestEncodeIsMarshal(t *testing.T) {
	uid := int64(7)
	// As read makes it: json.Marshal of the record.
	rec, err := json.Marshal(map[string]any{"core": map[string]any{"label": map[string]any{"val": "<a> & \"b\" é \u2028"}}, "id": 3})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 29, 10, 0, 0, 123456000, time.UTC)
	for _, ev := range []recordEvent{
		{Table: "finds", ID: 3, Record: rec, Version: 12, UserID: &uid, At: at, Subscriptions: []string{"s1", "s2"}},
		{Table: "finds", ID: 3, Record: rec, Version: 0, Actor: "plugin:geo", At: at, Subscriptions: []string{"a\"b"}},
		{Table: "us_2", ID: 1 << 40, Record: json.RawMessage(`{}`), Subscriptions: nil},
	} {
		want, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.encode(); string(got) != string(want) {
			t.Fatalf("encode\n%s\nMarshal\n%s", got, want)
		}
	}
}
