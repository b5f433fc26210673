package records

import "context"

// TemplateNames lists the record-view templates of the scope's table, by
// name. Strata stores no templates yet (the templates area is a later
// issue), so every table has none and clients use their default layout;
// the full record's schema says the same ("template": null).
func TemplateNames(_ context.Context, _ *Scope) ([]string, error) {
	return []string{}, nil
}
