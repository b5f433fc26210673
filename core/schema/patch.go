package schema

import (
	"encoding/json"

	"github.com/strata-archaeo/strata/core/wire"
)

// Patch is one key of a partial update: Set says the key was in the body.
// null sets the zero value (clearing min, max, max_length or a text), so a
// client can both leave a setting alone (omit it) and clear it (null).
type Patch[T any] struct {
	Set   bool
	Value T
}

// UnmarshalJSON marks the key present; the decoder calls it only then. The
// value is read with the API's liberal rules ("1" for 1, "0" for false).
func (p *Patch[T]) UnmarshalJSON(b []byte) error {
	var v T
	if string(b) != "null" {
		if err := wire.Decode(b, &v, wire.Options{}); err != nil {
			return err
		}
	}
	p.Set, p.Value = true, v
	return nil
}

// MarshalJSON writes the value (so a Patch round-trips in tests and logs).
func (p Patch[T]) MarshalJSON() ([]byte, error) { return json.Marshal(p.Value) }

// Set returns a Patch carrying v, for callers building updates in Go.
func Set[T any](v T) Patch[T] { return Patch[T]{Set: true, Value: v} }

func (p Patch[T]) apply(dst *T) {
	if p.Set {
		*dst = p.Value
	}
}
