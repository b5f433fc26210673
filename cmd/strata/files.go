package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/files"
)

// cmdFiles serves strata files SUBCOMMAND.
func cmdFiles(ctx context.Context, args []string, e env) error {
	if len(args) == 0 {
		return usageError{"files needs a subcommand: check", "files"}
	}
	switch {
	case args[0] == "help" && len(args) > 1:
		return cmdHelp(append([]string{"files"}, args[1:]...), e)
	case isHelp(args[0]):
		return helpRequest{"files"}
	case args[0] == "check":
		return cmdFilesCheck(ctx, args[1:], e)
	}
	return usageError{fmt.Sprintf("unknown files subcommand %q", args[0]), "files"}
}

type filesCheckFlags struct {
	app   string
	fix   bool
	grace time.Duration
	json  bool
}

func (f *filesCheckFlags) bind(c *config.Config, fs *flag.FlagSet) {
	c.RegisterStorageFlags(fs)
	fs.StringVar(&f.app, "app", "", "check this application only (default: every one)")
	fs.BoolVar(&f.fix, "fix", false, "remove orphan blobs and partial uploads older than --grace (file rows are never deleted)")
	fs.DurationVar(&f.grace, "grace", time.Hour, "leave orphans younger than this alone: an upload in flight writes its blob before its row")
	fs.BoolVar(&f.json, "json", false, "print the reports as JSON")
}

// errFilesDisagree makes the command exit 1 when a check found problems
// it did not (or could not) fix.
var errFilesDisagree = errors.New("the files and the store disagree (see above)")

// cmdFilesCheck compares every app's file rows with the file store.
func cmdFilesCheck(ctx context.Context, args []string, e env) error {
	var fl filesCheckFlags
	cfg, rest, err := loadConfig("files check", args, e, fl.bind)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q", rest), "files check"}
	}
	if err := needDataDir(cfg); err != nil {
		return err
	}
	st, reg, err := openStorage(ctx, cfg, e)
	if err != nil {
		return err
	}
	defer reg.Close()
	names := []string{fl.app}
	if fl.app == "" {
		if names, err = reg.List(ctx); err != nil {
			return err
		}
	}
	var reports []*files.CheckReport
	clean := true
	for _, name := range names {
		a, err := reg.Get(ctx, name)
		if err != nil {
			return fmt.Errorf("app %s: %w", name, err)
		}
		rep, err := files.Check(ctx, a.DB, st, name, files.CheckOptions{Fix: fl.fix, Grace: fl.grace})
		if err != nil {
			return err
		}
		reports = append(reports, rep)
		if len(rep.Problems) > 0 || (!fl.fix && !rep.OK()) {
			clean = false
		}
		if !fl.json {
			fmt.Fprintf(e.stdout, "%s: %d files, %d blobs; %d orphan blobs, %d younger than %s left alone, %d partial uploads, %d rows without their bytes",
				name, rep.Files, rep.Blobs, len(rep.Orphans), rep.Young, fl.grace, rep.Partial, len(rep.Problems))
			if fl.fix {
				fmt.Fprintf(e.stdout, "; %d removed", rep.Removed)
			}
			fmt.Fprintln(e.stdout)
			for _, p := range rep.Problems {
				fmt.Fprintf(e.stdout, "  file %d: %s (%s) %s\n", p.FileID, p.What, p.Key, p.Detail)
			}
		}
	}
	if fl.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			return err
		}
	}
	if !clean {
		return errFilesDisagree
	}
	return nil
}
