package linkedart

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// object is a JSON object whose keys are written in the order they were
// added. Documents are built from these (never from Go maps) so that the
// output is byte-identical for the same input and its key order follows the
// Linked Art convention (@context, id, type, _label, classifications, ...).
type object struct {
	keys []string
	vals []any
}

// set appends key with value v. Values that carry no information (nil, empty
// strings, empty lists, empty objects) are left out so that optional parts of
// a record do not produce empty properties, which the schemas would reject
// (e.g. an empty TimeSpan) or which expand to nothing.
func (o *object) set(key string, v any) {
	switch x := v.(type) {
	case nil:
		return
	case string:
		if x == "" {
			return
		}
	case []any:
		if len(x) == 0 {
			return
		}
	case *object:
		if x == nil || len(x.keys) == 0 {
			return
		}
	}
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, v)
}

// MarshalJSON writes the keys in insertion order.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, fmt.Errorf("value of %q: %w", k, err)
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// obj builds an object from alternating keys and values.
func obj(kv ...any) *object {
	o := &object{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}
