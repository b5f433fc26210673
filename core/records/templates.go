package records

import (
	"context"
)

// TemplateNames lists the print templates of the scope's table, by name
// (core/templates keeps them).
func TemplateNames(ctx context.Context, s *Scope) ([]string, error) {
	rows, err := s.DB.Query(ctx, `SELECT name FROM `+s.DB.Sys("templates")+` WHERE tb = ? ORDER BY name`, s.Table.Name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
