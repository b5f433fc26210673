package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/files"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/backup"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/scratch"
	"github.com/strata-archaeo/strata/core/server"
)

// cmdAppExport writes an application's portable archive to stdout (or
// --out), the same archive GET /backup/{file}/download serves.
func cmdAppExport(ctx context.Context, args []string, e env) error {
	var out string
	name, cfg, err := oneArgument("app export", args, e, func(fs *flag.FlagSet) {
		fs.StringVar(&out, "out", "", "write the archive to this file instead of standard output")
	})
	if err != nil {
		return err
	}
	// No application has an invalid name: refuse before opening the
	// storage, which makes the data folder and the instance key.
	if err := apps.ValidateName(name); err != nil {
		return cliError(err)
	}
	if err := needDataDir(cfg); err != nil {
		return err
	}
	st, reg, err := openStorage(ctx, cfg, e)
	if err != nil {
		return err
	}
	defer reg.Close()
	a, err := reg.Get(ctx, name)
	if err != nil {
		return cliError(err)
	}
	var w io.Writer = e.stdout
	var f *os.File
	if out != "" {
		// Written beside, renamed when whole: a failed export leaves no
		// archive that looks valid.
		if f, err = os.OpenFile(out+".partial", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err != nil {
			return err
		}
		defer os.Remove(out + ".partial")
		w = f
	}
	tmp, err := scratch.Open(cfg.DataDir)
	if err != nil {
		return err
	}
	defer tmp.Close()
	m, err := backup.Write(ctx, a, st, w, tmp.Path(), nil)
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(out+".partial", out)
		}
	}
	if err != nil {
		return cliError(err)
	}
	fmt.Fprintf(e.stderr, "exported %s: %d tables, %d records, %d users, %d files\n", name, m.Counts.Tables, m.Counts.Records, m.Counts.Users, m.Counts.Files)
	return nil
}

// cmdAppImport restores an archive (a file, or - for stdin) as the
// application it was made from, or --as another name; an existing
// application of that name is replaced atomically.
func cmdAppImport(ctx context.Context, args []string, e env) error {
	var as string
	var accounts bool
	file, cfg, err := oneArgument("app import", args, e, func(fs *flag.FlagSet) {
		fs.StringVar(&as, "as", "", "the application to create or replace (default: the archive's own)")
		fs.BoolVar(&accounts, "restore-accounts", false, "replacing an application, bring back the archive's accounts too (default: keep the live ones)")
	})
	if err != nil {
		return err
	}
	open := func() (io.ReadCloser, error) {
		if file == "-" {
			return io.NopCloser(e.stdin), nil
		}
		return os.Open(file)
	}
	if as == "" {
		if file == "-" {
			return usageError{"reading standard input needs --as NAME", "app import"}
		}
		r, err := open()
		if err != nil {
			return err
		}
		m, err := backup.ReadManifest(r)
		r.Close()
		if err != nil {
			return cliError(err)
		}
		as = m.App
	}
	// The name and the archive are checked before the storage is opened
	// (which makes the data folder and the instance key): a refusal
	// leaves nothing behind.
	if err := apps.ValidateName(as); err != nil {
		return cliError(err)
	}
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	st, reg, err := openStorage(ctx, cfg, e)
	if err != nil {
		return err
	}
	defer reg.Close()
	tmp, err := scratch.Open(cfg.DataDir)
	if err != nil {
		return err
	}
	defer tmp.Close()
	res, err := backup.Restore(ctx, reg, st, as, r, backup.RestoreOptions{TmpDir: tmp.Path(), RestoreAccounts: accounts})
	if err != nil {
		return cliError(err)
	}
	verb := "created"
	if res.Replaced {
		verb = "replaced"
	}
	fmt.Fprintf(e.stdout, "%s application %s from %s (%s): %d records, %d users, %d files\n", verb, as, res.From, res.FromEngine, res.Records, res.Users, res.Files)
	if res.Replaced {
		fmt.Fprintf(e.stdout, "accounts: %s\n", res.Accounts)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	return nil
}

// oneArgument reads a command's one argument (before or after its flags),
// the storage flags and the command's own (flags).
func oneArgument(command string, args []string, e env, flags func(*flag.FlagSet)) (string, config.Config, error) {
	arg, args := leadingName(args)
	cfg, rest, err := loadConfig(command, args, e, func(c *config.Config, fs *flag.FlagSet) {
		c.RegisterStorageFlags(fs)
		flags(fs)
	})
	if err != nil {
		return "", cfg, err
	}
	if arg == "" && len(rest) > 0 {
		arg, rest = rest[0], rest[1:]
	}
	if arg == "" || len(rest) > 0 {
		return "", cfg, usageError{"usage: " + findCommand(strings.Fields(command)...).synopsis(), command}
	}
	return arg, cfg, nil
}

// openStorage opens the file store and the registry the configuration
// names; the caller closes the registry.
func openStorage(ctx context.Context, cfg config.Config, e env) (files.Storage, *apps.Registry, error) {
	st, err := server.FileStorage(cfg)
	if err != nil {
		return nil, nil, err
	}
	reg, err := openRegistry(ctx, cfg, e, newLogger(cfg, e.stderr))
	if err != nil {
		return nil, nil, err
	}
	return st, reg, nil
}

// leadingName takes a first argument that is not a flag (the flag package
// stops at the first non-flag).
func leadingName(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

// cliError shows a domain error by its code and message, and the details
// the API would send with them (which parameter is missing, why a name is
// refused): a message alone may not say what to fix.
func cliError(err error) error {
	if de, ok := errs.As(err); ok {
		msg := de.Code + ": " + de.Message
		keys := slices.Sorted(maps.Keys(de.Extra))
		for i, k := range keys {
			sep := ", "
			if i == 0 {
				sep = " ("
			}
			msg += fmt.Sprintf("%s%s: %v", sep, k, de.Extra[k])
		}
		if len(keys) > 0 {
			msg += ")"
		}
		return errors.New(msg)
	}
	return err
}
