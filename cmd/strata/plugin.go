package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/pluginhost"
)

// cmdPlugin serves strata plugin SUBCOMMAND.
func cmdPlugin(ctx context.Context, args []string, e env) error {
	if len(args) == 0 {
		return usageError{"plugin needs a subcommand: install, trust, list, new", "plugin"}
	}
	switch {
	case args[0] == "help" && len(args) > 1: // strata plugin help install
		return cmdHelp(append([]string{"plugin"}, args[1:]...), e)
	case isHelp(args[0]):
		return helpRequest{"plugin"}
	}
	switch args[0] {
	case "install":
		return cmdPluginInstall(ctx, args[1:], e)
	case "trust":
		return cmdPluginTrust(ctx, args[1:], e)
	case "list":
		return cmdPluginList(args[1:], e)
	case "new":
		return cmdPluginNew(args[1:], e)
	}
	return usageError{fmt.Sprintf("unknown plugin subcommand %q", args[0]), "plugin"}
}

// pluginFlags binds the flags of the plugin commands: the plugin folder,
// as serve reads it.
func pluginFlags(c *config.Config, fs *flag.FlagSet) {
	fs.StringVar(&c.PluginDir, "plugin-dir", c.PluginDir, "plugin binaries folder (env STRATA_PLUGIN_DIR)")
}

// pluginInstallTimeout bounds the check of a plugin (start, handshake,
// Describe).
const pluginInstallTimeout = 30 * time.Second

// cmdPluginInstall checks a plugin executable as the server does and puts
// it in the plugin folder atomically, its SHA-256 recorded: a running
// server picks it up (reload) without a restart.
func cmdPluginInstall(ctx context.Context, args []string, e env) error {
	var file []string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") { // FILE before the flags
		file, args = args[:1], args[1:]
	}
	cfg, rest, err := loadConfig("plugin install", args, e, pluginFlags)
	if err != nil {
		return err
	}
	if rest = append(file, rest...); len(rest) != 1 {
		return usageError{"plugin install needs one FILE", "plugin install"}
	}
	ctx, cancel := context.WithTimeout(ctx, pluginInstallTimeout)
	defer cancel()
	man, path, sum, err := pluginhost.Install(ctx, rest[0], cfg.PluginDir)
	if err != nil {
		if ee, ok := errs.As(err); ok {
			msg := ee.Message
			if d, ok := ee.Extra["detail"]; ok {
				msg += ": " + fmt.Sprint(d)
			}
			return fmt.Errorf("%s: %s (%s)", rest[0], msg, ee.Code)
		}
		return fmt.Errorf("%s: %w", rest[0], err)
	}
	fmt.Fprintf(e.stdout, "installed plugin %s %s as %s\nsha256 %s\n", man.GetName(), man.GetVersion(), path, sum)
	fmt.Fprintf(e.stdout, "a running server reloads it within seconds (or: POST /<app>/api/plugins/%s/reload)\n", man.GetName())
	return nil
}

// cmdPluginTrust records the checksums of plugin executables already in
// the plugin folder (built there by make build), each checked first.
func cmdPluginTrust(ctx context.Context, args []string, e env) error {
	var files []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") { // FILEs before the flags
		files, args = append(files, args[0]), args[1:]
	}
	cfg, rest, err := loadConfig("plugin trust", args, e, pluginFlags)
	if err != nil {
		return err
	}
	if files = append(files, rest...); len(files) == 0 {
		return usageError{"plugin trust needs at least one FILE", "plugin trust"}
	}
	dir, err := filepath.Abs(cfg.PluginDir)
	if err != nil {
		return err
	}
	for _, file := range files {
		abs, err := filepath.Abs(file)
		if err != nil {
			return err
		}
		if filepath.Dir(abs) != dir {
			return fmt.Errorf("%s: not in the plugin folder %s (use strata plugin install to put it there)", file, cfg.PluginDir)
		}
		ctx, cancel := context.WithTimeout(ctx, pluginInstallTimeout)
		man, sum, err := pluginhost.Trust(ctx, abs)
		cancel()
		if err != nil {
			if ee, ok := errs.As(err); ok {
				return fmt.Errorf("%s: %s (%s)", file, ee.Message, ee.Code)
			}
			return fmt.Errorf("%s: %w", file, err)
		}
		fmt.Fprintf(e.stdout, "trusted plugin %s %s in %s\nsha256 %s\n", man.GetName(), man.GetVersion(), file, sum)
	}
	return nil
}

// cmdPluginList lists the executables of the plugin folder with their
// recorded checksums, without running them.
func cmdPluginList(args []string, e env) error {
	cfg, rest, err := loadConfig("plugin list", args, e, pluginFlags)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q", rest), "plugin list"}
	}
	entries, err := os.ReadDir(cfg.PluginDir)
	if err != nil {
		return fmt.Errorf("plugin folder: %w", err)
	}
	sums, err := pluginhost.Checksums(cfg.PluginDir)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tCHECKSUM\tSHA256")
	var names []string
	for _, en := range entries {
		info, err := os.Stat(filepath.Join(cfg.PluginDir, en.Name()))
		if en.Name()[0] == '.' || err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			continue
		}
		names = append(names, en.Name())
	}
	slices.Sort(names)
	for _, n := range names {
		sum, err := pluginhost.FileSHA256(filepath.Join(cfg.PluginDir, n))
		if err != nil {
			return err
		}
		state := "ok"
		switch rec, ok := sums[n]; {
		case !ok:
			state = "unrecorded (trusted at first start)"
		case rec != sum:
			state = "MISMATCH (refused: install it again)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n, state, sum)
	}
	return tw.Flush()
}
