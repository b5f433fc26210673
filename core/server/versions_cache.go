package server

import (
	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/schema"
)

// Context keys of what a request read once and reuses.
const (
	ctxVersions = "strata.versions"
	ctxGrants   = "strata.grants" // *auth.Grants of a token's user
)

// versions are the app's change counters as this request found them.
type versions struct{ catalog, auth int64 }

// requestVersions reads the catalog and access versions in one query, once
// per request: the caches of catalogs (schema.Cache) and of accounts
// (auth.AccessCache) are checked against them, so a change made through any
// node is seen by the next request. A read-only route may have assumed
// them instead, to be checked with its first queries (readonly.go).
func (s *Server) requestVersions(c *gin.Context) (versions, error) {
	if v, ok := c.Get(ctxVersions); ok {
		return v.(versions), nil
	}
	db := appOf(c).DB
	n, err := db.Counters(c.Request.Context(), versionKeys...)
	if err != nil {
		return versions{}, err
	}
	v := versions{catalog: n[0], auth: n[1]}
	s.seen.saw(db, v)
	c.Set(ctxVersions, v)
	return v, nil
}

// requestCatalog is the app's catalog as the API shows it, checked against
// this request's versions.
func (s *Server) requestCatalog(c *gin.Context) (*schema.Catalog, error) {
	v, err := s.requestVersions(c)
	if err != nil {
		return nil, err
	}
	a := appOf(c)
	cat, err := s.catalogs.GetAt(c.Request.Context(), a.Name, a.DB, v.catalog)
	if err != nil {
		return nil, err
	}
	return s.relabel(c, cat.Visible()), nil
}

// labelsKey is a catalog relabelled for a language (Catalog.Memo key):
// made again when the catalog or the loaded plugins change.
type labelsKey struct {
	lang string
	gen  uint64
}

// relabel is cat with the plugins' labels in the language the client asks
// for (Accept-Language): the columns and child tables that plugin features
// add, where the plugin translates them and no admin renamed them
// (pluginhost.Manager.Relabel). The answer varies with the header, and
// says in which language its plugin labels are when it is not the default.
func (s *Server) relabel(c *gin.Context, cat *schema.Catalog) *schema.Catalog {
	c.Header("Vary", "Accept-Language")
	lang := s.plugins.PickLanguage(c.GetHeader("Accept-Language"))
	if lang == "" {
		return cat
	}
	c.Header("Content-Language", lang)
	key := labelsKey{lang: lang, gen: s.plugins.LabelsVersion()}
	return cat.Memo(key, func() any { return s.plugins.Relabel(cat, lang) }).(*schema.Catalog)
}
