package fieldsync

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/wire"
)

// Bounds of a push (docs/sync.md): a device sends its queue in batches.
const (
	// MaxMutations is the most mutations one push may carry.
	MaxMutations = 500
	// maxNameLen bounds the client's names: mutation_id, device_id,
	// temp_id and table.
	maxNameLen = 100
)

var (
	errTooManyMutations = errs.New(errs.TooLarge, "sync_too_many_mutations",
		fmt.Sprintf("a push carries at most %d mutations: send the rest in another", MaxMutations))
	errBadMutation = errs.New(errs.Invalid, "sync_invalid_mutation", "a mutation is not valid")
)

// pushBody is POST /sync/push's body.
type pushBody struct {
	Mutations []mutation `json:"mutations"`
}

// mutation is one change a device made offline (docs/sync.md, "Push").
// Values keep their exact numbers (json.Number), as a save's do.
type mutation struct {
	MutationID  string         `json:"mutation_id"`
	DeviceID    string         `json:"device_id"`
	Seq         int64          `json:"seq"`
	Table       string         `json:"table"`
	ID          int64          `json:"id,omitempty"`
	TempID      string         `json:"temp_id,omitempty"`
	BaseVersion *int64         `json:"base_version,omitempty"`
	Set         map[string]any `json:"set,omitempty"`
	Delete      bool           `json:"delete,omitempty"`
	Plugins     map[string]any `json:"plugins,omitempty"`
	// RS is a stratigraphic relation change instead of a record's
	// (push_relations.go).
	RS *rsChange `json:"rs,omitempty"`
}

// check refuses a mutation of a shape no device sends; index names it in
// the answer. The whole push is refused then, before anything is applied:
// a queue with a malformed entry is a client's bug, not a refusal to
// record.
func (m *mutation) check(index int) error {
	bad := func(field, why string) error {
		return errBadMutation.With("index", index).With("field", field).With("detail", why)
	}
	for _, n := range []struct{ field, v string }{{"mutation_id", m.MutationID}, {"device_id", m.DeviceID}, {"table", m.Table}} {
		if n.v == "" {
			return bad(n.field, "required")
		}
	}
	for _, n := range []struct{ field, v string }{{"mutation_id", m.MutationID}, {"device_id", m.DeviceID},
		{"table", m.Table}, {"temp_id", m.TempID}} {
		if len(n.v) > maxNameLen || !utf8.ValidString(n.v) {
			return bad(n.field, fmt.Sprintf("at most %d characters", maxNameLen))
		}
	}
	if m.Seq < 1 {
		return bad("seq", "a whole number from 1")
	}
	if m.RS != nil {
		return m.checkRS(bad)
	}
	switch {
	case m.ID < 0:
		return bad("id", "ids are positive integers")
	case m.ID > 0 && m.TempID != "":
		return bad("temp_id", "a mutation names its record by id or by temp_id, not both")
	case m.Delete && m.ID == 0 && m.TempID == "":
		return bad("id", "a delete names its record")
	case m.Delete && (len(m.Set) > 0 || len(m.Plugins) > 0):
		return bad("set", "a delete sets nothing")
	case m.BaseVersion != nil && *m.BaseVersion < 0:
		return bad("base_version", "a version is a whole number from 0")
	}
	for f, v := range m.Set {
		if ref, ok := v.(map[string]any); ok {
			if _, err := tempRef(ref); err != nil {
				return bad("set."+f, err.Error())
			}
		}
	}
	return nil
}

// tempRef reads a value {"temp_id": "t"}: the id of the record the same
// device created as t.
func tempRef(v map[string]any) (string, error) {
	t, ok := v["temp_id"].(string)
	if len(v) != 1 || !ok || t == "" || len(t) > maxNameLen {
		return "", fmt.Errorf(`an object value is {"temp_id": "<a temp_id of this device>"}`)
	}
	return t, nil
}

// encode is the mutation as stored while it is held.
func (m *mutation) encode() (string, error) {
	b, err := json.Marshal(m)
	return string(b), err
}

// decodeMutation reads a held mutation back, numbers exact as received.
func decodeMutation(body string) (*mutation, error) {
	var m mutation
	if err := wire.Decode([]byte(body), &m, wire.Options{ExactNumbers: true}); err != nil {
		return nil, fmt.Errorf("held mutation: %w", err)
	}
	return &m, nil
}
