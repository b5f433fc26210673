package filter

import (
	"net/url"
	"sort"
	"strings"
)

// ParseLegacyQuery reads the search parameters BraDypUS clients put in a
// list's or an export's query string: qt=filter (or advanced) with the
// filter as JSON in q, qt=fast with quick-search text in q, and
// q_<field>=text, a case-insensitive "contains" on one field. It returns
// the condition and the quick-search text; fields are checked when the
// condition is rendered, as with every filter.
func ParseLegacyQuery(q url.Values) (Node, string, error) {
	var parts []Node
	search := ""
	switch strings.ToLower(strings.TrimSpace(q.Get("qt"))) {
	case "filter", "advanced":
		if raw := strings.TrimSpace(q.Get("q")); raw != "" {
			n, err := ParseJSON([]byte(raw))
			if err != nil {
				return nil, "", err
			}
			parts = append(parts, n)
		}
	case "fast", "all":
		search = q.Get("q")
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		if strings.HasPrefix(k, "q_") && len(k) > 2 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := strings.TrimSpace(q.Get(k)); v != "" {
			if len(v) > MaxInput {
				return nil, "", invalidf("%s is longer than %d bytes", clip(k), MaxInput)
			}
			parts = append(parts, Cond{Field: k[2:], Op: "_icontains", Args: []string{v}})
		}
	}
	return All(parts...), search, nil
}
