package wire

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestBool(t *testing.T) {
	cases := []struct {
		in      any
		want    bool
		wantErr error // nil, ErrEmpty, or errBad
	}{
		{true, true, nil}, {false, false, nil},
		{json.Number("1"), true, nil}, {json.Number("0"), false, nil},
		{float64(1), true, nil}, {float64(0), false, nil},
		{"1", true, nil}, {"0", false, nil},
		{"true", true, nil}, {"FALSE", false, nil}, {" True ", true, nil},
		{"on", true, nil}, {"off", false, nil}, {"yes", true, nil}, {"no", false, nil},
		{"", false, ErrEmpty}, {"  ", false, ErrEmpty},
		{"maybe", false, errBad}, {json.Number("2"), false, errBad}, {float64(0.5), false, errBad},
		{[]any{}, false, errBad}, {map[string]any{}, false, errBad}, {nil, false, errBad},
	}
	for _, c := range cases {
		got, err := Bool(c.in)
		checkErr(t, "Bool", c.in, err, c.wantErr)
		if c.wantErr == nil && got != c.want {
			t.Errorf("Bool(%#v) = %v, want %v", c.in, got, c.want)
		}
	}
}

var errBad = errors.New("bad")

func checkErr(t *testing.T, fn string, in any, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Errorf("%s(%#v): unexpected error %v", fn, in, err)
	case want == ErrEmpty && !errors.Is(err, ErrEmpty):
		t.Errorf("%s(%#v): error %v, want ErrEmpty", fn, in, err)
	case want == errBad && (err == nil || errors.Is(err, ErrEmpty) || Want(err) == ""):
		t.Errorf("%s(%#v): error %v, want a wantError", fn, in, err)
	}
}

func TestInt(t *testing.T) {
	cases := []struct {
		in      any
		want    int64
		wantErr error
	}{
		{json.Number("12"), 12, nil}, {"12", 12, nil}, {" 12 ", 12, nil}, {"-3", -3, nil},
		{"12.0", 12, nil}, {json.Number("1e3"), 1000, nil}, {float64(7), 7, nil},
		{true, 1, nil}, {false, 0, nil},
		{"9223372036854775807", 9223372036854775807, nil},
		{"", 0, ErrEmpty},
		{"abc", 0, errBad}, {"12.5", 0, errBad}, {json.Number("12.5"), 0, errBad},
		{"99999999999999999999", 0, errBad}, {float64(1.5), 0, errBad},
		{[]any{json.Number("1")}, 0, errBad}, {nil, 0, errBad},
	}
	for _, c := range cases {
		got, err := Int(c.in)
		checkErr(t, "Int", c.in, err, c.wantErr)
		if c.wantErr == nil && got != c.want {
			t.Errorf("Int(%#v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestFloat(t *testing.T) {
	cases := []struct {
		in      any
		want    float64
		wantErr error
	}{
		{json.Number("1.5"), 1.5, nil}, {"1.5", 1.5, nil}, {" 2 ", 2, nil}, {"3,5", 3.5, nil},
		{float64(4), 4, nil}, {"-0.25", -0.25, nil},
		{"", 0, ErrEmpty},
		{"abc", 0, errBad}, {"NaN", 0, errBad}, {"Inf", 0, errBad}, {"1,000.5", 0, errBad},
		{true, 0, errBad}, {map[string]any{}, 0, errBad},
	}
	for _, c := range cases {
		got, err := Float(c.in)
		checkErr(t, "Float", c.in, err, c.wantErr)
		if c.wantErr == nil && got != c.want {
			t.Errorf("Float(%#v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestText(t *testing.T) {
	cases := []struct {
		in      any
		want    string
		wantErr error
	}{
		{"a", "a", nil}, {json.Number("12"), "12", nil}, {true, "true", nil},
		{[]any{"a"}, "", errBad}, {map[string]any{"a": "b"}, "", errBad}, {nil, "", errBad},
	}
	for _, c := range cases {
		got, err := Text(c.in)
		checkErr(t, "Text", c.in, err, c.wantErr)
		if c.wantErr == nil && got != c.want {
			t.Errorf("Text(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

type inner struct {
	Weight *float64 `json:"weight"`
}

type sample struct {
	inner
	Name     string          `json:"name"`
	IsPlugin bool            `json:"is_plugin"`
	Order    int             `json:"order"`
	Limit    *int            `json:"limit"`
	Flag     *bool           `json:"flag"`
	Tags     []string        `json:"tags"`
	Extra    map[string]int  `json:"extra"`
	Any      any             `json:"any"`
	Raw      json.RawMessage `json:"raw"`
	Skipped  string          `json:"-"`
	NoTag    string
}

func TestDecode(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	b := func(v bool) *bool { return &v }
	cases := []struct {
		name string
		body string
		want sample
		err  string // a fragment of the error, "" for none
	}{
		{"proper JSON", `{"name":"siti","is_plugin":false,"order":1}`, sample{Name: "siti", Order: 1}, ""},
		{"BraDypUS client", `{"name":"siti","is_plugin":"0","order":"1"}`, sample{Name: "siti", Order: 1}, ""},
		{"flags as strings", `{"is_plugin":"1","flag":"true"}`, sample{IsPlugin: true, Flag: b(true)}, ""},
		{"on and empty", `{"is_plugin":"on","flag":""}`, sample{IsPlugin: true}, ""},
		{"spaces around a number", `{"order":" 12 ","limit":"5"}`, sample{Order: 12, Limit: i(5)}, ""},
		{"empty optional number is null", `{"limit":"","weight":""}`, sample{}, ""},
		{"embedded field", `{"weight":"2.5"}`, sample{inner: inner{Weight: f(2.5)}}, ""},
		{"keys fold case", `{"Name":"x","IS_PLUGIN":1,"notag":"y"}`, sample{Name: "x", IsPlugin: true, NoTag: "y"}, ""},
		{"number as text", `{"name":12}`, sample{Name: "12"}, ""},
		{"unknown and dash keys ignored", `{"zzz":1,"Skipped":"no","-":"no"}`, sample{}, ""},
		{"lists and maps", `{"tags":["a","b"],"extra":{"x":"3"}}`, sample{Tags: []string{"a", "b"}, Extra: map[string]int{"x": 3}}, ""},
		{"null leaves zero", `{"name":null,"limit":null}`, sample{}, ""},
		{"bad integer", `{"order":"abc"}`, sample{}, "order must be an integer, not text"},
		{"fraction for an integer", `{"order":1.5}`, sample{}, "order must be an integer, not a number"},
		{"bad boolean", `{"is_plugin":"maybe"}`, sample{}, "is_plugin must be a boolean, not text"},
		{"list for text", `{"name":["a"]}`, sample{}, "name must be text, not a list"},
		{"object for a list", `{"tags":{"a":1}}`, sample{}, "tags must be a list, not an object"},
		{"path inside a list", `{"tags":["a",{}]}`, sample{}, "tags[1] must be text, not an object"},
		{"path inside a map", `{"extra":{"x":"y"}}`, sample{}, "extra.x must be an integer, not text"},
		{"array body", `[1]`, sample{}, "the body must be an object, not a list"},
		{"NUL in text", `{"name":"a\u0000b"}`, sample{}, "name must be text without NUL characters"},
		{"overflow", `{"order":"99999999999999999999"}`, sample{}, "order must be an integer within"},
		{"syntax", `{"name":`, sample{}, "the body ends in the middle of a value"},
		{"trailing data", `{} {}`, sample{}, "unexpected data after the JSON value"},
		{"empty body", `  `, sample{}, "the body is empty"},
		{"invalid UTF-8", "{\"name\":\"\xff\"}", sample{}, "not valid UTF-8"},
		{"lone high surrogate", `{"name":"a\ud800b"}`, sample{}, "surrogate"},
		{"lone low surrogate", `{"name":"\udc00"}`, sample{}, "surrogate"},
		{"high then not low", `{"name":"\ud800\u0041"}`, sample{}, "surrogate"},
		{"surrogate pair", `{"name":"\ud83d\ude00"}`, sample{Name: "😀"}, ""},
		{"escaped backslash before u", `{"name":"\\ud800"}`, sample{Name: `\ud800`}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got sample
			err := Decode([]byte(c.body), &got, Options{})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				if goTypeName.MatchString(err.Error()) {
					t.Fatalf("error names a Go type: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(c.want)
			if string(gj) != string(wj) {
				t.Fatalf("got %s\nwant %s", gj, wj)
			}
		})
	}
}

var goTypeName = regexp.MustCompile(`map\[|interface \{|\[\]any|int64|float64|server\.|json\.|\bstruct\b`)

func TestDecodeInterfaces(t *testing.T) {
	var got struct {
		Any any             `json:"any"`
		Raw json.RawMessage `json:"raw"`
	}
	body := `{"any":{"n":12345678901234567,"l":[1.5]},"raw":{"a":[1, 2]}}`
	if err := Decode([]byte(body), &got, Options{ExactNumbers: true}); err != nil {
		t.Fatal(err)
	}
	n := got.Any.(map[string]any)["n"]
	if n != json.Number("12345678901234567") {
		t.Fatalf("exact number lost: %#v", n)
	}
	if string(got.Raw) != `{"a":[1,2]}` {
		t.Fatalf("raw = %s", got.Raw)
	}
	if err := Decode([]byte(body), &got, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Any.(map[string]any)["l"].([]any)[0].(float64); !ok {
		t.Fatalf("numbers in an interface should be float64 without ExactNumbers: %#v", got.Any)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"name":"x","order":"1"}`, `{"tags":[1,"2"]}`, `[]`, `"\u0000"`, "\xff", `{"extra":{"a":"1e400"}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var s sample
		err := Decode([]byte(body), &s, Options{})
		if err != nil && goTypeName.MatchString(err.Error()) {
			t.Fatalf("error names a Go type: %v", err)
		}
	})
}
