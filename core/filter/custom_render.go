package filter

import (
	"encoding/json"
	"fmt"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// custom resolves a plugin operator to a node or an id set.
func (r *renderer) custom(s scope, c Cond) (string, error) {
	op, ok := r.opt.Core.lookup(c.Op)
	if !ok {
		op, ok = r.opt.Operators.lookup(c.Op)
	}
	if !ok {
		return "", invalidf("unknown operator %q", clip(c.Op))
	}
	if !op.appliesTo(c.Field) {
		return "", invalidf("operator %s does not apply to field %q: it serves %s", c.Op, clip(c.Field), op.serves()).
			With("operator", c.Op).With("field", clip(c.Field)).With("serves", op.Fields)
	}
	if !op.Virtual && !op.byPlugin(c.Field) {
		if _, _, err := r.column(s, c.Field); err != nil {
			return "", err
		}
	}
	if !r.resolve {
		return "1 = 1", nil
	}
	if r.expand >= maxExpansions {
		return "", invalidf("operator %s expands into too many operators", c.Op)
	}
	res, err := op.Resolve(r.ctx, OperatorCall{Table: s.t, Field: c.Field, Value: c.Raw, DB: r.db})
	if err != nil {
		if _, ok := errs.As(err); ok {
			return "", err
		}
		return "", fmt.Errorf("filter operator %s: %w", c.Op, err)
	}
	switch {
	case res.IDs != nil && res.Node != nil:
		return "", fmt.Errorf("filter operator %s resolved to both a node and ids", c.Op)
	case res.IDs != nil:
		return r.idSet(s, res.IDs), nil
	case res.Node != nil:
		r.expand++
		defer func() { r.expand-- }()
		return r.node(s, res.Node)
	}
	return "", fmt.Errorf("filter operator %s resolved to nothing", c.Op)
}

// idSet renders "id IN <ids>" with the whole set bound as one JSON value,
// so its size never meets the engines' limits on bound parameters.
func (r *renderer) idSet(s scope, ids []int64) string {
	if len(ids) == 0 {
		return "1 = 0"
	}
	b, _ := json.Marshal(ids) // []int64 always marshals
	r.args = append(r.args, string(b))
	col := s.ref + "." + r.db.Engine.Quote(schema.ColID)
	if r.db.Engine == store.Postgres {
		return col + " IN (SELECT CAST(value AS bigint) FROM json_array_elements_text(CAST(? AS json)))"
	}
	return col + " IN (SELECT value FROM json_each(?))"
}
