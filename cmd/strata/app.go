package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/bradypus"
	"github.com/strata-archaeo/strata/core/version"
)

func cmdApp(ctx context.Context, args []string, e env) error {
	if len(args) == 0 {
		return usageError{"app needs a subcommand: create, list, export, import or adopt", "app"}
	}
	switch {
	case args[0] == "create":
		return cmdAppCreate(ctx, args[1:], e)
	case args[0] == "list":
		return cmdAppList(ctx, args[1:], e)
	case args[0] == "export":
		return cmdAppExport(ctx, args[1:], e)
	case args[0] == "import":
		return cmdAppImport(ctx, args[1:], e)
	case args[0] == "adopt":
		return cmdAppAdopt(args[1:], e)
	case isHelp(args[0]) && len(args) == 1:
		return helpRequest{"app"}
	case args[0] == "help": // strata app help create
		return cmdHelp(append([]string{"app"}, args[1:]...), e)
	}
	return usageError{fmt.Sprintf("unknown app subcommand %q (create, list, export, import, adopt)", args[0]), "app"}
}

// cmdAppAdopt registers a BraDypUS application folder (strata app adopt
// PATH [--name NAME]): it is then listed with upgrade "major" until a
// super-admin of it runs the major upgrade.
func cmdAppAdopt(args []string, e env) error {
	var path string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		path, args = args[0], args[1:]
	}
	var name string
	cfg, rest, err := loadConfig("app adopt", args, e, func(c *config.Config, fs *flag.FlagSet) {
		c.RegisterStorageFlags(fs)
		fs.StringVar(&name, "name", "", "the application's name in Strata (default: the folder's name)")
	})
	if err != nil {
		return err
	}
	if path == "" && len(rest) > 0 {
		path, rest = rest[0], rest[1:]
	}
	if path == "" || len(rest) > 0 {
		return usageError{"usage: " + findCommand("app", "adopt").synopsis(), "app adopt"}
	}
	f, err := bradypus.Adopt(cfg.DataDir, path, name)
	if err != nil {
		return cliError(err)
	}
	major := f.Version
	if major == "" {
		major = "4"
	}
	fmt.Fprintf(e.stdout, "adopted BraDypUS %s application %s from %s: a super-admin of it runs POST /%s/api/upgrade/major\n", major, f.Name, path, f.Name)
	return nil
}

// cmdAppCreate creates an application. The password comes from --password,
// else from STRATA_ADMIN_PASSWORD, else from the first line of stdin, so it
// need not appear in the process list.
func cmdAppCreate(ctx context.Context, args []string, e env) error {
	var p apps.CreateParams
	// The name comes first (strata app create NAME --email ...); the flag
	// package stops at the first non-flag, so take it out before parsing.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		p.Name, args = args[0], args[1:]
	}
	cfg, rest, err := loadConfig("app create", args, e, appCreateFlags(&p))
	if err != nil {
		return err
	}
	if p.Name == "" && len(rest) > 0 {
		p.Name, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q", rest), "app create"}
	}
	// Each missing parameter is named, with where it may come from.
	switch {
	case p.Name == "":
		return usageError{"app create needs the application's NAME: " + findCommand("app", "create").synopsis(), "app create"}
	case p.Email == "":
		return usageError{"app create needs --email: the first super-admin's e-mail address", "app create"}
	}
	if p.Password == "" {
		p.Password = e.getenv("STRATA_ADMIN_PASSWORD")
	}
	if p.Password == "" && e.stdin != nil {
		line, _ := bufio.NewReader(e.stdin).ReadString('\n')
		p.Password = strings.TrimRight(line, "\r\n")
	}
	if p.Password == "" {
		return usageError{"app create needs the first super-admin's password: --password, " +
			"the STRATA_ADMIN_PASSWORD environment variable, or a line on standard input", "app create"}
	}
	// Everything Create would refuse is refused here, before the registry
	// is opened: opening it makes the data folder and the instance key.
	if err := p.Validate(); err != nil {
		return cliError(err)
	}
	reg, err := openRegistry(ctx, cfg, e, newLogger(cfg, e.stderr))
	if err != nil {
		return err
	}
	defer reg.Close()
	if _, err := reg.Create(ctx, p); err != nil {
		return cliError(err)
	}
	fmt.Fprintf(e.stdout, "created application %s with super_admin %s\n", p.Name, strings.ToLower(strings.TrimSpace(p.Email)))
	return nil
}

func cmdAppList(ctx context.Context, args []string, e env) error {
	cfg, rest, err := loadConfig("app list", args, e, storageFlags)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q", rest), "app list"}
	}
	if err := needDataDir(cfg); err != nil {
		return err
	}
	reg, err := openRegistry(ctx, cfg, e, newLogger(cfg, e.stderr))
	if err != nil {
		return err
	}
	defer reg.Close()
	names, err := reg.List(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		a, err := reg.Get(ctx, n)
		if err != nil {
			return err
		}
		def, _, err := a.Setting(ctx, apps.SettingDefinition)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s\t%s\n", n, def)
	}
	return nil
}

// cmdMigrate applies pending system-table migrations to every application.
func cmdMigrate(ctx context.Context, args []string, e env) error {
	cfg, rest, err := loadConfig("migrate", args, e, storageFlags)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q", rest), "migrate"}
	}
	if err := needDataDir(cfg); err != nil {
		return err
	}
	reg, err := openRegistry(ctx, cfg, e, newLogger(cfg, e.stderr))
	if err != nil {
		return err
	}
	defer reg.Close()
	if err := reg.MigrateAll(ctx); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "all applications are up to date")
	return nil
}

func cmdVersion(args []string, e env) error {
	if len(args) == 1 && isHelp(args[0]) {
		return helpRequest{"version"}
	}
	if len(args) > 0 {
		return usageError{fmt.Sprintf("version takes no arguments, got %q", args), "version"}
	}
	fmt.Fprintf(e.stdout, "strata %s (%s)\n", version.Version, version.GoVersion())
	return nil
}

// needDataDir refuses, on SQLite, a data folder that does not exist: a
// command that reads applications would otherwise make it and an instance
// key there, and report an empty instance where a mistyped --data-dir is
// the likelier cause. serve and app create make the folder.
func needDataDir(cfg config.Config) error {
	if cfg.DatabaseURL != "" {
		return nil
	}
	if _, err := os.Stat(cfg.DataDir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no data folder at %s: no application was made there (strata serve or strata app create makes it); "+
			"choose another with --data-dir DIR or STRATA_DATA_DIR", cfg.DataDir)
	}
	return nil
}
