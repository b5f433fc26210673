package filter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/strata-archaeo/strata/core/wire"
)

// namePattern is the shape of every table and field name (store.ValidIdent);
// a key of another shape can never name anything.
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// opPattern is the shape of an operator, built in or a plugin's.
var opPattern = regexp.MustCompile(`^_[a-z][a-z0-9_]{0,62}$`)

// maxTreeDepth bounds the nesting of the raw input before it is read as a
// filter (a valid filter needs about two levels per condition level).
const maxTreeDepth = 4 * MaxDepth

// ParseJSON reads a filter object (the POST body's "filter", or the value
// of a filter= query parameter). Empty input and null mean no filter (nil).
// A JSON string holding the object is accepted too, since some clients
// send the filter stringified.
func ParseJSON(raw []byte) (Node, error) {
	if len(raw) > MaxInput {
		return nil, invalidf("the filter is larger than %d bytes", MaxInput)
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok {
		if v, err = decodeJSON([]byte(s)); err != nil {
			return nil, err
		}
	}
	switch m := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return FromMap(m)
	}
	return nil, invalidf("the filter is a JSON object")
}

func decodeJSON(raw []byte) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	// The API's one decoding layer: numbers keep their literal text (ids
	// never go through float64); NUL, invalid UTF-8 and lone surrogates
	// are refused, the same on both engines.
	var v any
	if err := wire.Decode(raw, &v, wire.Options{ExactNumbers: true}); err != nil {
		return nil, invalidf("the filter is not valid JSON: %v", err)
	}
	return v, nil
}

// FromMap reads a filter given as a decoded JSON object (values from
// encoding/json, with or without UseNumber, or plain Go strings, numbers,
// booleans, slices and maps). An empty map means no filter (nil).
func FromMap(m map[string]any) (Node, error) {
	if m == nil {
		return nil, nil
	}
	norm, err := normalize(m, 0)
	if err != nil {
		return nil, err
	}
	p := &parser{}
	return p.object(norm.(map[string]any), 1)
}

// normalize turns every scalar into its text form (JSON numbers keep
// their literal text, booleans become "true"/"false"), so that a GET
// parameter and a JSON value give the same AST.
func normalize(v any, depth int) (any, error) {
	if depth > maxTreeDepth {
		return nil, invalidf("the filter is nested deeper than %d levels", MaxDepth)
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return x, nil
	case json.Number:
		return string(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalize(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			n, err := normalize(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	}
	return nil, invalidf("a filter value is text, a number, a boolean, null, a list or an object")
}

// parser turns a normalised tree into an AST, counting nodes.
type parser struct{ nodes int }

// flagOpposite is the operator a flag operator means when set to false.
var flagOpposite = map[string]string{"_null": "_nnull", "_nnull": "_null", "_empty": "_nempty", "_nempty": "_empty"}

func (p *parser) count() error {
	p.nodes++
	if p.nodes > MaxNodes {
		return invalidf("the filter has more than %d conditions and groups", MaxNodes)
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// object reads a condition object at depth: field keys, _and, _or. Its
// conditions are ANDed; an empty object is no condition (nil).
func (p *parser) object(m map[string]any, depth int) (Node, error) {
	if depth > MaxDepth {
		return nil, invalidf("the filter is nested deeper than %d levels", MaxDepth)
	}
	var parts []Node
	for _, k := range sortedKeys(m) {
		v := m[k]
		switch {
		case k == keyAnd || k == keyOr:
			n, err := p.group(k, v, depth)
			if err != nil {
				return nil, err
			}
			if n != nil {
				parts = append(parts, n)
			}
		case strings.HasPrefix(k, "_"):
			return nil, invalidf("%q is not a field: operators go inside a field, as {\"<field>\":{%q:...}}", clip(k), clip(k))
		case !namePattern.MatchString(k):
			return nil, ErrInvalidField.With("field", clip(k)).With("detail", fmt.Sprintf("%q cannot name a field", clip(k)))
		default:
			obj, ok := v.(map[string]any)
			if !ok {
				return nil, invalidf("%s: give an operator object, as {%q:{\"_eq\":...}}", k, k)
			}
			n, err := p.field(k, obj, depth)
			if err != nil {
				return nil, err
			}
			parts = append(parts, n)
		}
	}
	return All(parts...), nil
}

// group reads _and/_or: an array of condition objects.
func (p *parser) group(k string, v any, depth int) (Node, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, invalidf("%s takes an array of condition objects", k)
	}
	if err := p.count(); err != nil {
		return nil, err
	}
	var children []Node
	for i, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, invalidf("%s[%d] is not a condition object", k, i)
		}
		n, err := p.object(obj, depth+1)
		if err != nil {
			return nil, err
		}
		if n != nil {
			children = append(children, n)
		}
	}
	if len(children) == 0 {
		return nil, nil // an empty group gives no condition
	}
	if k == keyAnd {
		return And{Nodes: children}, nil
	}
	return Or{Nodes: children}, nil
}

// field reads the object under a name: an operator map ({"_eq": 1,
// "_nnull": true}) or a nested condition ({"name": {...}}, {"_or": [...]}).
func (p *parser) field(name string, obj map[string]any, depth int) (Node, error) {
	var ops, nested int
	for k := range obj {
		if strings.HasPrefix(k, "_") && k != keyAnd && k != keyOr {
			ops++
		} else {
			nested++
		}
	}
	switch {
	case ops > 0 && nested > 0:
		return nil, invalidf("%s mixes operators with nested conditions", name)
	case ops+nested == 0:
		return nil, invalidf("%s: empty condition", name)
	case nested > 0:
		if err := p.count(); err != nil {
			return nil, err
		}
		child, err := p.object(obj, depth+1)
		if err != nil {
			return nil, err
		}
		if child == nil {
			return nil, invalidf("%s: empty nested condition", name)
		}
		return Nested{Key: name, Node: child}, nil
	}
	var conds []Node
	for _, op := range sortedKeys(obj) {
		c, err := p.cond(name, op, obj[op])
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	return All(conds...), nil
}

// cond reads one operator and its operand.
func (p *parser) cond(field, op string, v any) (Node, error) {
	if err := p.count(); err != nil {
		return nil, err
	}
	if !opPattern.MatchString(op) {
		return nil, invalidf("unknown operator %q", clip(op))
	}
	spec, builtin := opInfo[op]
	if !builtin {
		// A plugin's operator: checked against the registry when rendered.
		return Cond{Field: field, Op: op, Raw: v}, nil
	}
	c := Cond{Field: field, Op: op}
	switch spec.arity {
	case arityFlag:
		s, ok := v.(string)
		if ok && (s == "false" || s == "0") {
			// _null=false is _nnull (clients send it from checkboxes).
			c.Op = flagOpposite[op]
			break
		}
		if v != nil && (!ok || (s != "" && s != "true" && s != "1")) {
			return nil, invalidf("%s.%s takes true, false or no value", field, op)
		}
	case arityOne:
		s, ok := v.(string)
		if !ok {
			if v == nil {
				return nil, invalidf("%s.%s needs a value (to match NULL use _null)", field, op)
			}
			return nil, invalidf("%s.%s takes one value", field, op)
		}
		if err := checkText(field, op, s); err != nil {
			return nil, err
		}
		c.Args = []string{s}
	case arityList, arityTwo:
		list, err := listOperand(field, op, v)
		if err != nil {
			return nil, err
		}
		if spec.arity == arityTwo && len(list) != 2 {
			return nil, invalidf("%s.%s takes exactly two values", field, op)
		}
		c.Args = list
	}
	return c, nil
}

// listOperand reads a JSON array of scalars or a comma-separated string.
// An empty string is an empty list.
func listOperand(field, op string, v any) ([]string, error) {
	var list []string
	switch x := v.(type) {
	case string:
		if x != "" {
			list = strings.Split(x, ",")
		}
	case []any:
		list = make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, invalidf("%s.%s: element %d is not a single value", field, op, i)
			}
			list[i] = s
		}
	default:
		return nil, invalidf("%s.%s takes an array or a comma-separated string", field, op)
	}
	if len(list) > MaxList {
		return nil, invalidf("%s.%s: more than %d values", field, op, MaxList)
	}
	if list == nil {
		list = []string{}
	}
	for _, s := range list {
		if err := checkText(field, op, s); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// checkText refuses operands no engine could bind: too long, not UTF-8,
// or with NUL (PostgreSQL text cannot hold it).
func checkText(field, op, s string) error {
	switch {
	case len(s) > MaxText:
		return invalidf("%s.%s: a value is longer than %d bytes", field, op, MaxText)
	case !utf8.ValidString(s):
		return invalidf("%s.%s: a value is not valid UTF-8", field, op)
	case strings.IndexByte(s, 0) >= 0:
		return invalidf("%s.%s: a value contains a NUL character", field, op)
	}
	return nil
}

// clip shortens a caller's text before it goes into an error message.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	for i := n; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return s[:n] + "…"
}
