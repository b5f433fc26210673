package filter

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// ParseQuery reads the filter of a GET query: the bracket form
// filter[<field>][<op>]=v (nested filter[<lookup>][<field>][<op>]=v,
// groups filter[_or][0][<field>][<op>]=v) and/or filter=<JSON object>.
// Everything given is ANDed; other parameters are ignored. No filter
// parameter at all gives nil.
//
// In the bracket form an object whose keys are all indexes (0, 1, ...)
// is an array, a trailing [] collects repeated parameters into a list
// (filter[id][_in][]=1&filter[id][_in][]=2), and a parameter repeated
// without [] is a list too.
func ParseQuery(q url.Values) (Node, error) {
	size := 0
	var keys []string
	for k, vs := range q {
		if k != "filter" && !strings.HasPrefix(k, "filter[") {
			continue
		}
		keys = append(keys, k)
		size += len(k)
		for _, v := range vs {
			size += len(v)
		}
	}
	if size > MaxInput {
		return nil, invalidf("the filter is larger than %d bytes", MaxInput)
	}
	sort.Strings(keys)
	var parts []Node
	tree := map[string]any{}
	for _, k := range keys {
		if k == "filter" {
			for _, v := range q[k] {
				n, err := ParseJSON([]byte(v))
				if err != nil {
					return nil, err
				}
				if n != nil {
					parts = append(parts, n)
				}
			}
			continue
		}
		path, ok := brackets(k[len("filter"):])
		if !ok {
			return nil, invalidf("malformed filter parameter %q", clip(k))
		}
		if err := insert(tree, path, q[k], k); err != nil {
			return nil, err
		}
	}
	if len(tree) > 0 {
		p := &parser{}
		n, err := p.object(arrays(tree).(map[string]any), 1)
		if err != nil {
			return nil, err
		}
		if n != nil {
			// The bracket form first, so its canonical form does not depend
			// on whether filter= was also given.
			parts = append([]Node{n}, parts...)
		}
	}
	return All(parts...), nil
}

// brackets splits "[a][b][]" into a, b, "". Brackets may not nest, and
// nothing may stand between or after them.
func brackets(s string) ([]string, bool) {
	var out []string
	for s != "" {
		if s[0] != '[' {
			return nil, false
		}
		end := strings.IndexByte(s, ']')
		if end < 0 || strings.IndexByte(s[1:end], '[') >= 0 {
			return nil, false
		}
		out = append(out, s[1:end])
		s = s[end+1:]
		if len(out) > maxTreeDepth {
			return nil, false
		}
	}
	return out, len(out) > 0
}

// insert puts the values of one parameter at path in tree.
func insert(tree map[string]any, path []string, values []string, param string) error {
	conflict := func() error { return invalidf("filter parameter %q conflicts with another one", clip(param)) }
	node := tree
	for i, seg := range path {
		last := i == len(path)-1
		if seg == "" {
			return invalidf("malformed filter parameter %q: [] only at the end, after a name", clip(param))
		}
		if last || (i == len(path)-2 && path[i+1] == "") {
			if _, taken := node[seg]; taken {
				return conflict()
			}
			var leaf any
			switch {
			case !last: // trailing []: always a list
				list := make([]any, len(values))
				for j, v := range values {
					list[j] = v
				}
				leaf = list
			case len(values) == 1:
				leaf = values[0]
			default:
				list := make([]any, len(values))
				for j, v := range values {
					list[j] = v
				}
				leaf = list
			}
			node[seg] = leaf
			return nil
		}
		next, exists := node[seg]
		if !exists {
			m := map[string]any{}
			node[seg] = m
			node = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return conflict()
		}
		node = m
	}
	return nil
}

// arrays turns every object whose keys are all indexes into an array in
// index order.
func arrays(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	type item struct {
		i int
		v any
	}
	items := make([]item, 0, len(m))
	allIdx := len(m) > 0
	for k, e := range m {
		m[k] = arrays(e)
		if !allIdx {
			continue
		}
		n, err := strconv.Atoi(k)
		if err != nil || n < 0 || strconv.Itoa(n) != k {
			allIdx = false
			continue
		}
		items = append(items, item{n, m[k]})
	}
	if !allIdx {
		return m
	}
	sort.Slice(items, func(a, b int) bool { return items[a].i < items[b].i })
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = it.v
	}
	return out
}
