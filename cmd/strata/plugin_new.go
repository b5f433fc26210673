package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/strata-archaeo/strata/cmd/strata/pluginnew"
	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// The help of strata plugin new. It is added here rather than in help.go's
// list so that this command stays in its own file; "plugin" itself is
// added only when no other file of the package lists it.
func init() {
	if findCommand("plugin") == nil {
		commands = append(commands, command{
			name: "plugin", args: "SUBCOMMAND", summary: "plugin development (new)",
			text: "Subcommands:\n  new   write the skeleton of a new plugin",
		})
	}
	commands = append(commands, command{
		name: "plugin new", args: "NAME", summary: "write the skeleton of a new plugin in ./NAME (or --dir)",
		text: "Writes a Go module for a new plugin: main.go (a table feature with a column and a\n" +
			"BeforeSave hook, a filter operator, a route), main_test.go (pluginsdk/plugintest: the\n" +
			"conformance check and a test per capability), go.mod requiring pluginsdk v" + pluginsdk.Version + ",\n" +
			"a Makefile (build, test, debug) and a README. NAME is the plugin's name: a lower-case\n" +
			"letter, then 1 to 30 lower-case letters, digits or underscores. An existing file of\n" +
			"the skeleton is never overwritten. Then: cd NAME && make test && make build.",
		flags: func(_ *config.Config, fs *flag.FlagSet) { new(pluginNewFlags).bind(fs) },
	})
}

type pluginNewFlags struct{ dir, module string }

func (f *pluginNewFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "dir", "", "the folder to write (default ./NAME)")
	fs.StringVar(&f.module, "module", "", "the Go module path (default example.org/NAME)")
}

// cmdPluginNew writes the skeleton of a plugin (package pluginnew).
func cmdPluginNew(args []string, e env) error {
	var f pluginNewFlags
	var name string
	// The name may come first (strata plugin new NAME --dir D): the flag
	// package stops at the first non-flag.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("plugin new", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.bind(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return helpRequest{"plugin new"}
		}
		return usageError{err.Error(), "plugin new"}
	}
	rest := fs.Args()
	if name == "" && len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q", rest), "plugin new"}
	}
	if name == "" {
		return usageError{"usage: " + findCommand("plugin", "new").synopsis(), "plugin new"}
	}
	if err := pluginnew.CheckName(name); err != nil {
		return usageError{err.Error(), "plugin new"}
	}
	dir := f.dir
	if dir == "" {
		dir = name
	}
	written, err := pluginnew.Write(dir, pluginnew.Params{Name: name, Module: f.module})
	if err != nil {
		return err
	}
	for _, w := range written {
		fmt.Fprintln(e.stdout, filepath.Join(dir, w))
	}
	fmt.Fprintf(e.stdout, "plugin %s written (pluginsdk v%s): cd %s && make test && make build\n", name, pluginsdk.Version, dir)
	return nil
}
