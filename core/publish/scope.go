package publish

import (
	"context"
	"slices"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// PublicActor is who a snapshot reads as: nobody signed in. It has no
// rights of its own; the publication setting gives it read access to
// the public tables, as per-table overrides with the filters as row
// subsets, and denies every other table.
func PublicActor() *auth.Actor {
	return &auth.Actor{Name: "public", Privilege: auth.Reader}
}

// Gate is the publication's view of an application: the records gate
// (records.Grants) of the public actor, over a catalog cut down to the
// public tables and fields. Every row a snapshot writes comes through
// one of its scopes, so privacy is the same gate as any user's: a table
// not public cannot be opened, a row outside its filter is not read, a
// field not public is not in the catalog the scope reads with.
type Gate struct {
	db     *store.DB
	full   *schema.Catalog // the filters render against it (they may name private fields)
	public *schema.Catalog
	grants *records.Grants
	cfg    *Config
}

// NewGate builds the gate of cfg on the application's catalog (Visible:
// fields of inactive features are never public).
func NewGate(db *store.DB, cat *schema.Catalog, cfg *Config) *Gate {
	full := cat.Visible()
	var overrides []auth.TablePrivilege
	var tables []*schema.Table
	for _, t := range full.Tables {
		tc := cfg.TableConfig(t.Name)
		if tc == nil {
			// Denied explicitly: the public actor's global level (reader)
			// would otherwise open it.
			overrides = append(overrides, auth.TablePrivilege{TableName: t.Name, Privilege: auth.Pending})
			continue
		}
		tp := auth.TablePrivilege{TableName: t.Name, Privilege: auth.Reader}
		if tc.Filter != nil {
			s := string(tc.Filter)
			tp.Subset = &s
		}
		overrides = append(overrides, tp)
		v := *t
		v.Fields = nil
		for _, f := range t.Fields {
			if slices.Contains(tc.Fields, f.Name) {
				v.Fields = append(v.Fields, f)
			}
		}
		if v.IDField != "" && !slices.Contains(tc.Fields, v.IDField) {
			v.IDField = "" // the label field is not public: records are named by id
		}
		v.Preview = slices.DeleteFunc(slices.Clone(v.Preview), func(p string) bool { return !slices.Contains(tc.Fields, p) })
		tables = append(tables, &v)
	}
	return &Gate{db: db, full: full, public: schema.NewCatalog(full.Version, tables),
		grants: records.NewGrants(PublicActor(), overrides), cfg: cfg}
}

// Catalog is the public catalog: public tables with their public fields.
func (g *Gate) Catalog() *schema.Catalog { return g.public }

// Scope opens the public scope on table: the records gate decides (an
// unknown or private table fails as it does for a user), then the scope
// reads with the public catalog.
func (g *Gate) Scope(ctx context.Context, table string) (*records.Scope, error) {
	sc, err := g.grants.Scope(ctx, g.db, g.full, table)
	if err != nil {
		return nil, err
	}
	t, ok := g.public.Table(table)
	if !ok {
		return nil, schema.ErrTableNotFound.With("table", table)
	}
	sc.Catalog, sc.Table = g.public, t
	return sc, nil
}
