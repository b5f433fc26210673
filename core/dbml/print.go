package dbml

import (
	"regexp"
	"strings"
)

// Print writes s as DBML: enums, then tables, then refs, each in its
// order; enum values always quoted, names quoted where they are not plain
// identifiers. Parse(Print(s)) gives s again (positions and warnings
// aside). Header is written first as // comment lines, if not empty.
func Print(s *Schema, header ...string) string {
	var b strings.Builder
	for _, h := range header {
		for _, line := range strings.Split(h, "\n") {
			b.WriteString("// " + line + "\n")
		}
	}
	blocks := 0
	sep := func() {
		if blocks > 0 || b.Len() > 0 {
			b.WriteString("\n")
		}
		blocks++
	}
	for _, e := range s.Enums {
		sep()
		printEnum(&b, e)
	}
	for _, t := range s.Tables {
		sep()
		printTable(&b, t)
	}
	if len(s.Refs) > 0 {
		sep()
		for _, r := range s.Refs {
			printRef(&b, r)
		}
	}
	return b.String()
}

var plainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Name is n as DBML writes a name: bare when it is a plain identifier,
// else double-quoted.
func Name(n string) string {
	if plainName.MatchString(n) {
		return n
	}
	return quote(n, '"')
}

func qualified(schema, name string) string {
	if schema == "" {
		return Name(name)
	}
	return Name(schema) + "." + Name(name)
}

// quote writes s between q on one line.
func quote(s string, q byte) string {
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', q:
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// String is s as a DBML string: single-quoted on one line, between three
// single quotes when it spans lines.
func String(s string) string {
	if !strings.ContainsAny(s, "\n\r") {
		return quote(s, '\'')
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'''" + r.Replace(s) + "'''"
}

func printEnum(b *strings.Builder, e *Enum) {
	b.WriteString("Enum " + qualified(e.Schema, e.Name) + " {\n")
	for _, v := range e.Values {
		b.WriteString("  " + quote(v.Name, '"'))
		if v.Note != "" {
			b.WriteString(" [note: " + String(v.Note) + "]")
		}
		b.WriteString("\n")
	}
	if e.Note != "" {
		b.WriteString("  Note: " + String(e.Note) + "\n")
	}
	if e.Vocabulary {
		b.WriteString("  // bdus:vocabulary\n")
	}
	b.WriteString("}\n")
}

func printTable(b *strings.Builder, t *Table) {
	b.WriteString("Table " + qualified(t.Schema, t.Name))
	if t.Alias != "" {
		b.WriteString(" as " + Name(t.Alias))
	}
	b.WriteString(" {\n")
	for _, c := range t.Columns {
		b.WriteString("  " + Name(c.Name) + " " + typeString(c.Type))
		if set := columnSettings(c); len(set) > 0 {
			b.WriteString(" [" + strings.Join(set, ", ") + "]")
		}
		b.WriteString("\n")
	}
	if t.Note != "" {
		b.WriteString("  Note: " + String(t.Note) + "\n")
	}
	if len(t.Indexes) > 0 {
		b.WriteString("\n  indexes {\n")
		for _, ix := range t.Indexes {
			b.WriteString("    " + indexColumns(ix))
			if set := indexSettings(ix); len(set) > 0 {
				b.WriteString(" [" + strings.Join(set, ", ") + "]")
			}
			b.WriteString("\n")
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
}

func typeString(t TypeRef) string {
	s := qualified(t.Schema, t.Name)
	if len(t.Args) > 0 {
		s += "(" + strings.Join(t.Args, ", ") + ")"
	}
	return s
}

func columnSettings(c *Column) []string {
	var out []string
	if c.PK {
		out = append(out, "pk")
	}
	if c.Increment {
		out = append(out, "increment")
	}
	if c.NotNull {
		out = append(out, "not null")
	}
	if c.Unique {
		out = append(out, "unique")
	}
	if c.Default != nil {
		out = append(out, "default: "+valueString(c.Default))
	}
	if c.Ref != nil {
		out = append(out, "ref: "+c.Ref.Rel+" "+endpointString(c.Ref.To))
	}
	if c.Note != "" {
		out = append(out, "note: "+String(c.Note))
	}
	return out
}

func valueString(v *Value) string {
	switch v.Kind {
	case KindString:
		return String(v.Text)
	case KindExpr:
		return "`" + v.Text + "`"
	}
	return v.Text
}

func endpointString(e Endpoint) string {
	s := qualified(e.Schema, e.Table) + "."
	if len(e.Columns) == 1 {
		return s + Name(e.Columns[0])
	}
	names := make([]string, len(e.Columns))
	for i, c := range e.Columns {
		names[i] = Name(c)
	}
	return s + "(" + strings.Join(names, ", ") + ")"
}

func indexColumn1(c IndexColumn) string {
	if c.Expr {
		return "`" + c.Name + "`"
	}
	return Name(c.Name)
}

func indexColumns(ix *Index) string {
	if len(ix.Columns) == 1 {
		return indexColumn1(ix.Columns[0])
	}
	parts := make([]string, len(ix.Columns))
	for i, c := range ix.Columns {
		parts[i] = indexColumn1(c)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func indexSettings(ix *Index) []string {
	var out []string
	if ix.PK {
		out = append(out, "pk")
	}
	if ix.Unique {
		out = append(out, "unique")
	}
	if ix.Name != "" {
		out = append(out, "name: "+String(ix.Name))
	}
	if ix.Type != "" {
		if plainName.MatchString(ix.Type) {
			out = append(out, "type: "+ix.Type)
		} else {
			out = append(out, "type: "+String(ix.Type))
		}
	}
	if ix.Note != "" {
		out = append(out, "note: "+String(ix.Note))
	}
	return out
}

func printRef(b *strings.Builder, r *Ref) {
	b.WriteString("Ref")
	if r.Name != "" {
		b.WriteString(" " + Name(r.Name))
	}
	b.WriteString(": " + endpointString(r.From) + " " + r.Rel + " " + endpointString(r.To))
	var set []string
	if r.OnDelete != "" {
		set = append(set, "delete: "+r.OnDelete)
	}
	if r.OnUpdate != "" {
		set = append(set, "update: "+r.OnUpdate)
	}
	if len(set) > 0 {
		b.WriteString(" [" + strings.Join(set, ", ") + "]")
	}
	b.WriteString("\n")
}
