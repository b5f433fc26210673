package schema

// Relabel returns the catalog with some labels replaced, for an answer in
// another language: table gives a table's label (or "" to keep it), field
// a field's label and help (or "" to keep each). Tables with nothing
// replaced are shared with c; the others are copies, so c is unchanged.
// The result is a catalog of its own (its own Memo), at c's version.
func (c *Catalog) Relabel(table func(*Table) string, field func(*Table, *Field) (label, help string)) *Catalog {
	tables := make([]*Table, len(c.Tables))
	changed := false
	for i, t := range c.Tables {
		tables[i] = t
		var nt *Table
		copyTable := func() {
			if nt == nil {
				cp := *t
				cp.Fields = append([]*Field(nil), t.Fields...)
				nt = &cp
				tables[i] = nt
			}
		}
		if l := table(t); l != "" && l != t.Label {
			copyTable()
			nt.Label = l
		}
		for j, f := range t.Fields {
			l, h := field(t, f)
			if (l == "" || l == f.Label) && (h == "" || h == f.Help) {
				continue
			}
			copyTable()
			nf := *f
			if l != "" {
				nf.Label = l
			}
			if h != "" {
				nf.Help = h
			}
			nt.Fields[j] = &nf
		}
		changed = changed || nt != nil
	}
	if !changed {
		return c
	}
	return newCatalog(c.Version, tables)
}
