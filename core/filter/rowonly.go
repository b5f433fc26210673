package filter

// RowOnly reports whether n reads nothing but the row it tests: no
// condition on another table (Nested) and only built-in operators (a
// plugin's operator is SQL the plugin writes, which may reach anything).
// Such a condition holds for a row's stored past state (a version
// snapshot standing in for the table) exactly as for the row itself.
func RowOnly(n Node) bool {
	switch x := n.(type) {
	case nil:
		return true
	case And:
		return allRowOnly(x.Nodes)
	case Or:
		return allRowOnly(x.Nodes)
	case Cond:
		return isBuiltin(x.Op)
	}
	return false
}

func allRowOnly(ns []Node) bool {
	for _, n := range ns {
		if !RowOnly(n) {
			return false
		}
	}
	return true
}
