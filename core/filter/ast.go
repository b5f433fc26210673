package filter

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// Node is a filter expression: And, Or, Cond or Nested. Its String is a
// canonical form: equal filters, whatever form they arrived in, print the
// same.
type Node interface {
	String() string
	node()
}

// And matches rows that match every node. An empty And adds no condition.
type And struct{ Nodes []Node }

// Or matches rows that match at least one node. An empty Or adds no
// condition either: an empty group is "no condition given", not "false".
type Or struct{ Nodes []Node }

// Cond applies one operator to one column of the current table: a field or
// a system column (id; creator on normal tables; id_link on plugin tables).
type Cond struct {
	Field string
	Op    string
	// Args are the operands in text form (JSON numbers and booleans as
	// their literal text): one for comparisons, any number for _in/_nin,
	// two for _between, none for _null, _nnull, _empty, _nempty. They are
	// typed by the column when rendered.
	Args []string
	// Raw is the operand of an operator that is not built in (a plugin's,
	// e.g. _chrono_overlap), normalised like Args: strings, []any and
	// map[string]any only.
	Raw any
}

// Nested is a condition on another table reached through Key from the
// current one: a lookup field, a plugin table, the via-table of a backlink,
// or (inside a via-table condition) the via-table's parent.
type Nested struct {
	Key  string
	Node Node
}

func (And) node()    {}
func (Or) node()     {}
func (Cond) node()   {}
func (Nested) node() {}

func (n And) String() string { return "and(" + joinNodes(n.Nodes) + ")" }
func (n Or) String() string  { return "or(" + joinNodes(n.Nodes) + ")" }

func (n Nested) String() string { return n.Key + "{" + nodeString(n.Node) + "}" }

func (n Cond) String() string {
	s := n.Field + "." + n.Op
	if !isBuiltin(n.Op) {
		b, _ := json.Marshal(n.Raw) // normalised values always marshal
		return s + "(" + string(b) + ")"
	}
	q := make([]string, len(n.Args))
	for i, a := range n.Args {
		q[i] = strconv.Quote(a)
	}
	if opInfo[n.Op].arity == arityList {
		return s + "[" + strings.Join(q, ",") + "]"
	}
	return s + "(" + strings.Join(q, ",") + ")"
}

func nodeString(n Node) string {
	if n == nil {
		return "true"
	}
	return n.String()
}

func joinNodes(ns []Node) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = nodeString(n)
	}
	return strings.Join(s, ",")
}

// All joins nodes with AND, dropping nils: All(filter, search) is the
// list's condition. It returns nil when nothing is left.
func All(nodes ...Node) Node {
	var out []Node
	for _, n := range nodes {
		if n != nil {
			out = append(out, n)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return And{Nodes: out}
}

// arity says how many operands an operator takes.
type arity int

const (
	arityOne  arity = iota // exactly one value
	arityList              // a list (JSON array or comma-separated string)
	arityTwo               // exactly two values
	arityFlag              // none: true, or no value
)

type opKind int

const (
	kindCompare  opKind = iota // = <> < > <= >= BETWEEN IN
	kindPattern                // contains / starts / ends and negations
	kindPresence               // null / empty and negations
)

type opSpec struct {
	arity arity
	kind  opKind
	// negative operators also match NULL (CONTRACT §5)
	negative bool
	// bools take only equality, list and presence operators
	onBool bool
}

var opInfo = map[string]opSpec{
	"_eq":           {arityOne, kindCompare, false, true},
	"_neq":          {arityOne, kindCompare, true, true},
	"_gt":           {arityOne, kindCompare, false, false},
	"_lt":           {arityOne, kindCompare, false, false},
	"_gte":          {arityOne, kindCompare, false, false},
	"_lte":          {arityOne, kindCompare, false, false},
	"_between":      {arityTwo, kindCompare, false, false},
	"_in":           {arityList, kindCompare, false, true},
	"_nin":          {arityList, kindCompare, true, true},
	"_contains":     {arityOne, kindPattern, false, false},
	"_icontains":    {arityOne, kindPattern, false, false},
	"_ncontains":    {arityOne, kindPattern, true, false},
	"_starts_with":  {arityOne, kindPattern, false, false},
	"_nstarts_with": {arityOne, kindPattern, true, false},
	"_ends_with":    {arityOne, kindPattern, false, false},
	"_nends_with":   {arityOne, kindPattern, true, false},
	"_null":         {arityFlag, kindPresence, false, true},
	"_nnull":        {arityFlag, kindPresence, false, true},
	"_empty":        {arityFlag, kindPresence, false, true},
	"_nempty":       {arityFlag, kindPresence, false, true},
}

// BuiltinOperators lists the built-in operators, sorted (for the search
// configuration endpoint and the documentation).
func BuiltinOperators() []string {
	out := make([]string, 0, len(opInfo))
	for k := range opInfo {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isBuiltin(op string) bool { _, ok := opInfo[op]; return ok }

// Group keys.
const (
	keyAnd = "_and"
	keyOr  = "_or"
)
