package filter

// The SQL expression tree ParseWhere builds, and its translation into the
// filter AST with SQL's three-valued logic kept.

type sqlExpr interface {
	// truth returns the node matching the rows where the expression is
	// TRUE (want) or FALSE (!want); rows where it is NULL match neither,
	// which is SQL's three-valued logic under WHERE and NOT.
	truth(want bool) Node
}

type sqlAnd struct{ a, b sqlExpr }
type sqlOr struct{ a, b sqlExpr }
type sqlNot struct{ e sqlExpr }

type sqlPred struct {
	col    string
	op     string // = <> != < <= > >= in "is null" like between
	neg    bool   // NOT IN, IS NOT NULL, NOT LIKE, NOT BETWEEN
	lits   []string
	likeOp string
}

func (e sqlAnd) truth(want bool) Node {
	if want {
		return joinAnd(e.a.truth(true), e.b.truth(true))
	}
	return joinOr(e.a.truth(false), e.b.truth(false))
}

func (e sqlOr) truth(want bool) Node {
	if want {
		return joinOr(e.a.truth(true), e.b.truth(true))
	}
	return joinAnd(e.a.truth(false), e.b.truth(false))
}

// joinAnd and joinOr flatten chains (a AND b AND c is one group of three).
func joinAnd(a, b Node) Node {
	var out []Node
	for _, n := range []Node{a, b} {
		if g, ok := n.(And); ok {
			out = append(out, g.Nodes...)
		} else {
			out = append(out, n)
		}
	}
	return And{Nodes: out}
}

func joinOr(a, b Node) Node {
	var out []Node
	for _, n := range []Node{a, b} {
		if g, ok := n.(Or); ok {
			out = append(out, g.Nodes...)
		} else {
			out = append(out, n)
		}
	}
	return Or{Nodes: out}
}

func (e sqlNot) truth(want bool) Node { return e.e.truth(!want) }

// negation of each comparison among non-NULL values
var flipCompare = map[string]string{"=": "<>", "<>": "=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}

var compareOp = map[string]string{"=": "_eq", "<": "_lt", "<=": "_lte", ">": "_gt", ">=": "_gte"}

var likeNegation = map[string]string{"_eq": "_neq", "_icontains": "_ncontains", "_starts_with": "_nstarts_with", "_ends_with": "_nends_with"}

func (e sqlPred) truth(want bool) Node {
	c := func(op string, args ...string) Node {
		switch opInfo[op].arity {
		case arityFlag:
			args = nil
		case arityList:
			if args == nil {
				args = []string{}
			}
		}
		return Cond{Field: e.col, Op: op, Args: args}
	}
	// notNull pairs a negative operator (which also matches NULL) with
	// _nnull, giving SQL's meaning: NULL is neither equal nor unequal.
	notNull := func(n Node) Node { return joinAnd(c("_nnull"), n) }
	switch e.op {
	case "is null":
		if want != e.neg {
			return c("_null")
		}
		return c("_nnull")
	case "in":
		if want != e.neg {
			return c("_in", e.lits...)
		}
		return notNull(c("_nin", e.lits...))
	case "between":
		if want != e.neg {
			return c("_between", e.lits...)
		}
		return Or{Nodes: []Node{c("_lt", e.lits[0]), c("_gt", e.lits[1])}}
	case "like":
		if want != e.neg {
			return c(e.likeOp, e.lits...)
		}
		if e.likeOp == "_nnull" {
			return c("_in") // a non-NULL value always matches '%': never FALSE
		}
		return notNull(c(likeNegation[e.likeOp], e.lits...))
	}
	op := e.op
	if !want {
		op = flipCompare[op]
	}
	if op == "<>" || op == "!=" {
		return notNull(c("_neq", e.lits...))
	}
	return c(compareOp[op], e.lits...)
}
