package pluginsdk

import (
	"context"
	"encoding/json"
	"fmt"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Catalog describes an application's user tables, as Host.Catalog returns
// it: what a plugin needs to follow links between tables (for example the
// chronology's density over related tables).
type Catalog struct {
	Tables    []CatalogTable    `json:"tables"`
	Relations []CatalogRelation `json:"relations"`
}

// CatalogTable is one user table.
type CatalogTable struct {
	Name              string          `json:"name"`
	Label             string          `json:"label"`
	IsPlugin          bool            `json:"is_plugin"`
	PluginOf          string          `json:"plugin_of,omitempty"`
	IDField           string          `json:"id_field,omitempty"`
	ChronoDensityPath []string        `json:"chrono_density_path,omitempty"`
	Features          map[string]bool `json:"features,omitempty"` // feature → active
	Fields            []CatalogField  `json:"fields"`
}

// CatalogField is one field of a table.
type CatalogField struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Type     string `json:"type"`
	DBType   string `json:"db_type"`
	IDFromTb string `json:"id_from_tb,omitempty"` // a lookup's referenced table
}

// CatalogRelation is a foreign key between user tables.
type CatalogRelation struct {
	FromTb  string `json:"from_tb"`
	FromCol string `json:"from_col"`
	ToTb    string `json:"to_tb"`
	ToCol   string `json:"to_col"`
}

// Table returns the table called name.
func (c *Catalog) Table(name string) (*CatalogTable, bool) {
	for i := range c.Tables {
		if c.Tables[i].Name == name {
			return &c.Tables[i], true
		}
	}
	return nil, false
}

// Children lists the tables that point at parent, with the column that
// holds parent's ids: plugin tables (id_link), lookup fields and relations.
func (c *Catalog) Children(parent string) []ChildLink {
	var out []ChildLink
	seen := map[ChildLink]bool{}
	add := func(l ChildLink) {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	for _, t := range c.Tables {
		if t.IsPlugin && t.PluginOf == parent {
			add(ChildLink{Table: t.Name, Column: "id_link"})
		}
		for _, f := range t.Fields {
			if f.IDFromTb == parent {
				add(ChildLink{Table: t.Name, Column: f.Name})
			}
		}
	}
	for _, r := range c.Relations {
		if r.ToTb == parent && (r.ToCol == "" || r.ToCol == "id") {
			add(ChildLink{Table: r.FromTb, Column: r.FromCol})
		}
	}
	return out
}

// ChildLink is a table whose Column holds ids of a parent table.
type ChildLink struct {
	Table  string
	Column string
}

func (h *hostClient) Catalog(ctx context.Context, app string) (*Catalog, error) {
	c, err := h.get()
	if err != nil {
		return nil, err
	}
	resp, err := c.Catalog(ctx, &pluginv1.CatalogRequest{App: app})
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	var cat Catalog
	if err := json.Unmarshal(resp.GetCatalog(), &cat); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return &cat, nil
}
