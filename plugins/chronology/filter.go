package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/strata-archaeo/strata/plugins/chronology/chrono"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// ResolveFilter turns {"chrono_from": {"_chrono_overlap": [from, to]}} (or
// {"from": …, "to": …}) into an ordinary filter selecting the records whose
// dating shares at least one year with from..to (chrono.Overlaps). Bounds
// are years as numbers or numeric text (the server passes numbers as
// text), or tokens such as "c4 BCE" (from takes the token's first year, to
// its last); one may be null or left out for an open query side. A query
// given backwards is read the right way round.
func (p *plugin) ResolveFilter(_ context.Context, call pluginsdk.FilterCall) (pluginsdk.FilterResult, error) {
	if call.Operator != opOverlap {
		return pluginsdk.FilterResult{}, pluginsdk.Errorf("invalid_filter", "unknown operator %s", call.Operator)
	}
	// Keyed by chrono_from, or by the plugin's name ({"chronology":
	// {"_chrono_overlap": ...}}, which the server accepts for every
	// operator): the window is on the dating's columns either way.
	if call.Field != colFrom && call.Field != pluginName {
		return pluginsdk.FilterResult{}, pluginsdk.Errorf("invalid_filter", "%s is keyed by %s, not %s", opOverlap, colFrom, call.Field)
	}
	from, to, err := overlapOperand(call.Value)
	if err != nil {
		return pluginsdk.FilterResult{}, err
	}
	if from != nil && to != nil && *from > *to {
		from, to = to, from
	}
	return pluginsdk.FilterResult{Filter: windowFilter(from, to)}, nil
}

// overlapOperand reads [from, to], {from, to} or "from,to": the comma
// form is what _in and _between take in a query string
// (filter[chrono_from][_chrono_overlap]=-350,-320), an empty side open.
func overlapOperand(raw json.RawMessage) (from, to *int, err error) {
	usage := func(format string, a ...any) error {
		return pluginsdk.Errorf("invalid_filter", opOverlap+" takes [from, to], {\"from\": …, \"to\": …} or \"from,to\" in signed years, e.g. [-350, -320] or \"-350,-320\": "+format, a...)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, usage("not JSON")
	}
	var lo, hi any
	switch x := v.(type) {
	case []any:
		if len(x) != 2 {
			return nil, nil, usage("%d values given", len(x))
		}
		lo, hi = x[0], x[1]
	case string:
		parts := strings.Split(x, ",")
		if len(parts) != 2 {
			return nil, nil, usage("%d values given", len(parts))
		}
		lo, hi = strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
	case map[string]any:
		for k := range x {
			if k != "from" && k != "to" {
				return nil, nil, usage("unknown key %q", k)
			}
		}
		lo, hi = x["from"], x["to"]
	default:
		return nil, nil, usage("got %s", show(v))
	}
	if from, err = operandYear(lo, true); err != nil {
		return nil, nil, usage("from: %v", err)
	}
	if to, err = operandYear(hi, false); err != nil {
		return nil, nil, usage("to: %v", err)
	}
	if from == nil && to == nil {
		return nil, nil, usage("at least one bound is needed")
	}
	return from, to, nil
}

// operandYear reads one bound: null, a year, or a token (start for a
// from, end for a to).
func operandYear(v any, start bool) (*int, error) {
	if v == nil {
		return nil, nil
	}
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		if strings.TrimSpace(x) == "" {
			return nil, nil
		}
		s = x
	default:
		return nil, errNotYear
	}
	if n, ok := pluginsdk.Int(s); ok {
		y := int(n)
		if err := chrono.Check(&y, nil); err != nil {
			return nil, err
		}
		return &y, nil
	}
	a, b, err := chrono.ParseToken(s)
	if err != nil {
		return nil, err
	}
	if start {
		return &a, nil
	}
	return &b, nil
}

var errNotYear = pluginsdk.Errorf("invalid_filter", "not a year")

// windowFilter selects records with some chronology (chrono_from or
// chrono_to set) that may fall in from..to, either side optional: a query
// from keeps records whose chrono_to is null (post quem, open upwards) or
// ≥ from; a query to keeps records whose chrono_from is null (ante quem,
// open downwards) or ≤ to. This is chrono.InWindow in the filter language:
// the /chrono/timeline rule of CONTRACT.md §8 and, with both sides, the
// _chrono_overlap operator. The _null alternatives are what make an open
// bound open: a plain _lte/_gte never matches NULL.
func windowFilter(from, to *int) map[string]any {
	conds := []any{anyOf(field(colFrom, "_nnull", true), field(colTo, "_nnull", true))}
	if to != nil {
		conds = append(conds, anyOf(field(colFrom, "_null", true), field(colFrom, "_lte", *to)))
	}
	if from != nil {
		conds = append(conds, anyOf(field(colTo, "_null", true), field(colTo, "_gte", *from)))
	}
	return map[string]any{"_and": conds}
}

func field(name, op string, v any) map[string]any {
	return map[string]any{name: map[string]any{op: v}}
}

func anyOf(conds ...any) map[string]any { return map[string]any{"_or": conds} }
