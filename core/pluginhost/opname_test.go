package pluginhost_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// A plugin operator addressed by its plugin's name ({"testplug":
// {"_op": v}}, filter[testplug][_op]=v), in a JSON filter and in a query
// string, whatever fields the operator serves; and an operator under a
// field it does not serve is a 400 naming the operator, the field and
// what it serves.
func TestOperatorByPluginName(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), func(o *pluginhost.Options) { o.MinBackoff, o.MaxBackoff = time.Minute, time.Minute })
		f.activate("finds", "labels")
		for i, l := range []string{"a", "bb", "cc", "ddd"} {
			f.json("POST", "/digs/api/record/finds", fmt.Sprintf(`{"core":{"code":"F%d","label":%q}}`, i, l), f.writer, 200)
		}
		codes := func(method, url, body string) (int, string) {
			rec := f.do(method, url, body, f.reader)
			if rec.Code != 200 {
				return rec.Code, rec.Body.String()
			}
			var got []string
			for _, r := range testenv.CheckEnvelope(t, rec)["data"].([]any) {
				got = append(got, r.(map[string]any)["code"].(string))
			}
			return 200, fmt.Sprint(got)
		}
		for _, c := range []struct {
			name, method, url, body string
			want                    string
		}{
			{"any field, by the plugin's name", "POST", "/digs/api/records/finds", `{"filter":{"testplug":{"_any_ids":[2,4,99]}},"sort_field":"code"}`, "[F1 F3]"},
			{"a field's operator, by the plugin's name", "POST", "/digs/api/records/finds", `{"filter":{"testplug":{"_label_len":2}},"sort_field":"code"}`, "[F1 F2]"},
			{"with other conditions", "POST", "/digs/api/records/finds", `{"filter":{"_or":[{"testplug":{"_label_len":1}},{"code":{"_eq":"F3"}}]},"sort_field":"code"}`, "[F0 F3]"},
			{"query string", "GET", "/digs/api/records/finds?sort_field=code&filter[testplug][_any_ids][]=1&filter[testplug][_any_ids][]=3", "", "[F0 F2]"},
			{"query string, a field's operator", "GET", "/digs/api/records/finds?sort_field=code&filter[testplug][_label_len]=3", "", "[F3]"},
		} {
			if status, got := codes(c.method, c.url, c.body); status != 200 || got != c.want {
				t.Errorf("%s: %d %s, want %s", c.name, status, got, c.want)
			}
		}
		// The operator's own rules still hold when addressed by name: its
		// feature must be active on the table.
		rec := f.do("POST", "/digs/api/records/other", `{"filter":{"testplug":{"_label_len":2}}}`, f.reader)
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"code":"invalid_filter"`) || !strings.Contains(rec.Body.String(), "labels") {
			t.Errorf("by name on a table without the feature: %d %s", rec.Code, rec.Body)
		}
		// Another plugin's name, or a field the operator does not serve.
		for _, c := range []struct{ filter, field string }{
			{`{"code":{"_label_len":2}}`, "code"},
			{`{"testplug2":{"_label_len":2}}`, "testplug2"},
		} {
			rec := f.do("POST", "/digs/api/records/finds", `{"filter":`+c.filter+`}`, f.reader)
			var body map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			text := rec.Body.String()
			if rec.Code != 400 || body["code"] != "invalid_filter" || !strings.Contains(text, "_label_len") ||
				!strings.Contains(text, `\"`+c.field+`\"`) || !strings.Contains(text, `\"label\"`) || !strings.Contains(text, `\"testplug\"`) {
				t.Errorf("%s: %d %s, want 400 invalid_filter naming the operator, the field and the keys it serves", c.filter, rec.Code, text)
			}
		}
	})
}
