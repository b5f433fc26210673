package server

import (
	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/records"
)

// pluginSummary is /api/info's plugin list.
func (s *Server) pluginSummary() []gin.H {
	out := []gin.H{}
	for _, in := range s.plugins.List() {
		out = append(out, gin.H{"name": in.Name, "version": in.Version, "state": in.State})
	}
	return out
}

// addPluginScope completes a records scope with what plugins bring to its
// table: active features with their hooks, record sections, schema flags.
func (s *Server) addPluginScope(sc *records.Scope, app string) {
	sc.App = app
	ex := s.plugins.ForTable(sc.Table)
	sc.Features, sc.Sections, sc.SchemaFlags = ex.Features, ex.Sections, ex.SchemaFlags
	sc.HookLog = func(name string, err error) {
		s.log.Warn("a plugin call failed; the record operation went on without it", "app", app,
			"table", sc.Table.Name, "feature_or_section", name, "err", err)
	}
	sc.UncheckedLog = func(u records.Unchecked) {
		s.log.Warn("saved without a plugin's check: the row is marked unchecked until the plugin revalidates it",
			"app", app, "plugin", u.Plugin, "feature", u.Feature, "table", u.Table, "record_id", u.RecordID,
			"row_table", u.RowTable, "row_id", u.RowID, "reason", u.Reason)
	}
}

// pluginActor is the caller as plugin filter operators see it.
func pluginActor(sc *records.Scope) *records.Actor {
	a := &records.Actor{App: sc.App, Privilege: sc.Level}
	if sc.Actor != nil {
		a.UserID, a.APIKeyID, a.Name, a.Email = sc.Actor.UserID, sc.Actor.KeyID, sc.Actor.Name, sc.Actor.Email
	}
	return a
}
