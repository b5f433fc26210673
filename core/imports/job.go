package imports

import (
	"context"
	"io"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/records"
)

// KindData is the job kind of a data import.
const KindData = "import.data"

// dataArgs are an import's: the previewed file and how to read it.
type dataArgs struct {
	Token    string            `json:"token"`
	Tb       string            `json:"tb"`
	Mapping  map[string]string `json:"mapping,omitempty"`
	KeyField string            `json:"key_field,omitempty"`
	DryRun   bool              `json:"dry_run,omitempty"`
}

// Register adds the import job kinds to the job system: the job acts as
// the user who started it, with their rights as they are when it runs.
func Register(sys *jobs.System, host api.Host, reg *apps.Registry, store files.Storage) {
	sys.Register(KindData, asUser(host, reg, func(a dataArgs) string { return a.Tb },
		func(ctx context.Context, app *apps.App, sc *records.Scope, a dataArgs, run *jobs.Run, scopeOf scopeFunc) (any, error) {
			return importFile(ctx, store, app.Name, sc, a, run.Progress, scopeOf)
		}))
	registerGeoJSON(sys, host, reg, store)
}

type scopeFunc = func(table string) (*records.Scope, error)

// asUser is what every import job does first: bind its arguments, open
// the app and the scope of the table it writes as the user who started
// it, with their rights as they are now.
func asUser[A any](host api.Host, reg *apps.Registry, table func(A) string,
	do func(ctx context.Context, app *apps.App, sc *records.Scope, a A, run *jobs.Run, scopeOf scopeFunc) (any, error)) jobs.Func {
	return func(ctx context.Context, run *jobs.Run) (any, error) {
		var a A
		if err := run.Bind(&a); err != nil {
			return nil, err
		}
		app, err := reg.Get(ctx, run.App())
		if err != nil {
			return nil, err
		}
		sc, err := host.ScopeFor(ctx, app, run.User(), table(a))
		if err != nil {
			return nil, err
		}
		scopeOf := func(table string) (*records.Scope, error) { return host.ScopeFor(ctx, app, run.User(), table) }
		return do(ctx, app, sc, a, run, scopeOf)
	}
}

// importFile imports (or checks) the previewed file token into sc's table
// and answers the body of POST /import/data.
func importFile(ctx context.Context, store files.Storage, app string, sc *records.Scope, a dataArgs, progress func(done, total int64), scopeOf func(string) (*records.Scope, error)) (gin.H, error) {
	blob, err := openPreview(ctx, store, app, a.Token)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(blob)
	blob.Close()
	if err != nil {
		return nil, err
	}
	t, err := Parse(data)
	if err != nil {
		return nil, err
	}
	res, err := Run(ctx, sc, t, Options{Mapping: a.Mapping, KeyField: a.KeyField, DryRun: a.DryRun, Progress: progress, ScopeOf: scopeOf})
	if err != nil {
		return nil, err
	}
	if a.DryRun {
		return gin.H{"code": "ok_import_checked", "inserted": res.Inserted, "updated": res.Updated, "total": res.Total, "dry_run": true}, nil
	}
	_ = store.Delete(context.WithoutCancel(ctx), app, a.Token) // imported: the preview is done
	return gin.H{"code": "ok_import_data", "inserted": res.Inserted, "updated": res.Updated, "total": res.Total}, nil
}
