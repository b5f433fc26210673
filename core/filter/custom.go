package filter

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Operator is a filter operator added by a plugin, such as _chrono_overlap
// keyed by chrono_from. It never writes SQL: Resolve turns the operand into
// an AST node (rendered and checked like any filter) or a set of ids of the
// table's rows.
type Operator struct {
	Name string // "_" then lower-case letters, digits, underscores
	// Fields are the only fields the operator may be keyed by; empty means
	// any. Keyed by another field → invalid_filter.
	Fields []string
	// Virtual operators are keyed by a name that is no column, only by
	// one of Fields (the core's _intersects, keyed by geodata): the key is
	// not looked up among the table's fields.
	Virtual bool
	// Plugin is the name of the plugin that offers the operator (empty for
	// the core's). The operator may also be keyed by it, whatever Fields
	// says: {"<plugin>": {"<Name>": operand}}, for an operator that is
	// about the record rather than one column (dendro's _felled_between).
	// OperatorCall.Field is then the plugin's name, and the key is not
	// looked up among the table's fields (a column of that name, if any,
	// is not what the key means).
	Plugin string
	// Resolve is called once per condition when the filter is rendered
	// (never by Validate). An *errs.Error it returns reaches the caller as
	// is, so a plugin answers 400 invalid_filter for a bad operand itself.
	Resolve func(ctx context.Context, call OperatorCall) (Resolution, error)
}

// OperatorCall is one use of a plugin operator.
type OperatorCall struct {
	Table *schema.Table
	Field string
	// Value is the operand as sent, normalised: strings (numbers and
	// booleans in their literal text), []any and map[string]any.
	Value any
	// DB is the database the filter is rendered for (the app's): core
	// operators query it; plugins reach theirs through their host.
	DB *store.DB
}

// Resolution is what an operator resolves to: exactly one of Node (a
// condition on the same table) or IDs (the matching rows; a non-nil empty
// slice matches nothing).
type Resolution struct {
	Node Node
	IDs  []int64
}

// Registry holds the plugin operators of an instance. It is safe for
// concurrent use: plugins come and go while requests render filters.
type Registry struct {
	mu  sync.RWMutex
	ops map[string]Operator
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{ops: map[string]Operator{}} }

// Register adds op. Its name may not be a built-in operator, a group key,
// or already registered.
func (r *Registry) Register(op Operator) error {
	switch {
	case !opPattern.MatchString(op.Name):
		return fmt.Errorf("filter operator %q: names are _ then lower-case letters, digits or underscores", op.Name)
	case isBuiltin(op.Name) || op.Name == keyAnd || op.Name == keyOr:
		return fmt.Errorf("filter operator %q is built in", op.Name)
	case op.Resolve == nil:
		return fmt.Errorf("filter operator %q has no Resolve", op.Name)
	case op.Virtual && len(op.Fields) == 0:
		return fmt.Errorf("filter operator %q is virtual: name the keys it takes (Fields)", op.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.ops[op.Name]; dup {
		return fmt.Errorf("filter operator %q is already registered", op.Name)
	}
	op.Fields = slices.Clone(op.Fields)
	r.ops[op.Name] = op
	return nil
}

// Unregister removes the operator called name (a plugin went away).
func (r *Registry) Unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.ops, name)
}

// Names lists the registered operators, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.ops))
	for k := range r.ops {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (r *Registry) lookup(name string) (Operator, bool) {
	if r == nil {
		return Operator{}, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	op, ok := r.ops[name]
	return op, ok
}

func (op Operator) appliesTo(field string) bool {
	return len(op.Fields) == 0 || slices.Contains(op.Fields, field) || op.byPlugin(field)
}

// byPlugin reports whether key is the name of the operator's plugin.
func (op Operator) byPlugin(key string) bool { return op.Plugin != "" && key == op.Plugin }

// serves says in words which keys the operator takes, for an error.
func (op Operator) serves() string {
	var keys []string
	for _, f := range op.Fields {
		keys = append(keys, strconv.Quote(f))
	}
	if op.Plugin != "" {
		keys = append(keys, strconv.Quote(op.Plugin)+" (its plugin's name)")
	}
	return strings.Join(keys, ", ")
}

// maxExpansions bounds operators that resolve to nodes using operators.
const maxExpansions = 4
