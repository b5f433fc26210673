// Package appinfo answers GET /info/app: what a signed-in client knows of
// its application — public settings, the service's version and engine,
// counts as far as the caller may see, the plugins, and who is calling.
package appinfo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/version"
)

// PublicSettings are the settings a signed-in client may read.
var PublicSettings = []string{apps.SettingName, apps.SettingDefinition, apps.SettingLanguage, "allow_self_registration", "maxImageSize"}

// Routes: GET /info/app for every signed-in caller. plugins lists the
// loaded plugins ({name, version, state}).
func Routes(host api.Host, plugins func() []gin.H) []api.Route {
	h := handler{host: host, plugins: plugins}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/info/app", Access: auth.Enter, Handler: h.info},
	}
}

type handler struct {
	host    api.Host
	plugins func() []gin.H
}

// GET /info/app. BraDypUS's client reads name, definition and color at
// the top level; its openapi names lang; Strata's clients read app and
// actor. counts are the caller's: records of the tables it may read (its
// row subsets applied), not of the others.
func (h handler) info(c *gin.Context) {
	ctx := c.Request.Context()
	a := api.AppOf(c)
	settings, err := a.Settings(ctx)
	if err != nil {
		api.Fail(c, err)
		return
	}
	app := gin.H{}
	for _, k := range PublicSettings {
		if v, ok := settings[k]; ok {
			app[k] = v
		}
	}
	counts, err := h.counts(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	actor := api.ActorOf(c)
	body := gin.H{
		"app":        app,
		"name":       settings[apps.SettingName],
		"definition": settings[apps.SettingDefinition],
		"lang":       settings[apps.SettingLanguage],
		"version":    version.Version,
		"engine":     string(a.DB.Engine),
		"counts":     counts,
		"plugins":    h.plugins(),
		"actor":      gin.H{"user_id": actor.UserID, "api_key_id": actor.KeyID, "name": actor.Name, "privilege": actor.Privilege},
	}
	if v, ok := settings["color"]; ok && v != "" {
		body["color"] = v
	}
	api.Success(c, http.StatusOK, body)
}

// counts is {tables, records: {table: n}, records_total, users, files}
// in one query: the tables (plugin tables left out) the caller may read,
// each counted within its row subset.
func (h handler) counts(c *gin.Context) (gin.H, error) {
	ctx := c.Request.Context()
	a := api.AppOf(c)
	cat, err := h.host.Catalog(ctx, a)
	if err != nil {
		return nil, err
	}
	db := a.DB
	parts := []string{
		`SELECT '', 'users', COUNT(*) FROM ` + db.Sys("users"),
		`SELECT '', 'files', COUNT(*) FROM ` + db.Sys("files"),
	}
	var args []any
	tables := 0
	for _, t := range cat.Tables {
		if t.IsPlugin {
			continue
		}
		tables++
		sc, err := h.host.RecordScope(c, t.Name)
		if errors.Is(err, records.ErrNotEnough) || errors.Is(err, records.ErrSubsetBroken) {
			continue // a table the caller may not read is not counted
		}
		if err != nil {
			return nil, err
		}
		rows, rargs := sc.RowsSQL()
		parts = append(parts, `SELECT ?, 'records', COUNT(*) FROM (`+rows+`) AS r`)
		args = append(append(args, t.Name), rargs...)
	}
	perTable, total, users, files, err := runCounts(ctx, a, strings.Join(parts, ` UNION ALL `), args)
	if err != nil {
		return nil, err
	}
	return gin.H{"tables": tables, "records": perTable, "records_total": total, "users": users, "files": files}, nil
}

func runCounts(ctx context.Context, a *apps.App, q string, args []any) (perTable map[string]int64, total, users, files int64, err error) {
	rows, err := a.DB.Query(ctx, q, args...)
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("app counts: %w", err)
	}
	defer rows.Close()
	perTable = map[string]int64{}
	for rows.Next() {
		var tb, what string
		var n int64
		if err := rows.Scan(&tb, &what, &n); err != nil {
			return nil, 0, 0, 0, err
		}
		switch what {
		case "users":
			users = n
		case "files":
			files = n
		default:
			perTable[tb] = n
			total += n
		}
	}
	return perTable, total, users, files, rows.Err()
}
