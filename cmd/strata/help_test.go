package main

import (
	"context"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

// runHelp runs a command line with an environment that would make every
// command fail: help must not depend on it.
func runHelp(args ...string) (int, string, string) {
	return runWith(envMap{"STRATA_BCRYPT_COST": "not a number"}, args...)
}

func runWith(vars envMap, args ...string) (int, string, string) {
	var out, errOut strings.Builder
	code := run(context.Background(), args, env{
		getenv: vars.get,
		stdin:  strings.NewReader(""), stdout: &out, stderr: &errOut,
	})
	return code, out.String(), errOut.String()
}

type envMap map[string]string

func (m envMap) get(k string) string { return m[k] }

// Every command and subcommand answers -h, --help and help COMMAND on
// stdout with exit 0, naming each of its flags and environment variables.
func TestHelpOfEveryCommand(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		words := strings.Fields(c.name)
		forms := map[string][]string{
			"help " + c.name:   append([]string{"help"}, words...),
			c.name + " -h":     append(append([]string{}, words...), "-h"),
			c.name + " --help": append(append([]string{}, words...), "--help"),
			c.name + " -help":  append(append([]string{}, words...), "-help"),
		}
		if len(words) == 2 { // strata app help create
			forms[words[0]+" help "+words[1]] = []string{words[0], "help", words[1]}
		}
		if c.name == "app create" { // the name before the flags
			forms["app create NAME --help"] = []string{"app", "create", "dig", "--help"}
		}
		want := []string{"Usage:", "strata " + c.name}
		subs := []command{c}
		switch c.name {
		case "app":
			subs = []command{*findCommand("app", "create"), *findCommand("app", "list")}
		case "secrets":
			subs = []command{*findCommand("secrets", "rotate")}
		}
		for _, sub := range subs {
			sub.flagSet().VisitAll(func(f *flag.Flag) {
				want = append(want, "\n  --"+f.Name, f.Usage)
				if f.DefValue != "" && f.DefValue != "false" {
					want = append(want, "default "+f.DefValue)
				}
			})
			for _, v := range sub.env {
				want = append(want, v.name)
			}
		}
		for form, args := range forms {
			code, out, errOut := runHelp(args...)
			if code != 0 || errOut != "" {
				t.Errorf("%s: exit %d, stderr %q", form, code, errOut)
				continue
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("%s: the help lacks %q:\n%s", form, w, out)
				}
			}
		}
	}
}

// The overview names every command with all its flags, and every
// environment variable Strata reads.
func TestHelpOverview(t *testing.T) {
	t.Parallel()
	var first string
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}} {
		code, out, errOut := runHelp(args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Errorf("%v: another text than %v", args, "-h")
		}
	}
	want := []string{"--demo", "strata app create NAME --email EMAIL", "STRATA_CURVES_DIR", "STRATA_ADMIN_PASSWORD"}
	for _, c := range commands {
		want = append(want, c.name+" ")
		c.flagSet().VisitAll(func(f *flag.Flag) { want = append(want, "--"+f.Name) })
		for _, v := range c.env {
			want = append(want, v.name)
		}
	}
	// Whatever the configuration reads from the environment, literally.
	src, err := os.ReadFile("../../config/config.go")
	if err != nil {
		t.Fatal(err)
	}
	vars := regexp.MustCompile(`(?:str|getenv)\("([A-Z][A-Z0-9_]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(vars) < 10 {
		t.Fatalf("found only %d variables in config/config.go", len(vars))
	}
	for _, m := range vars {
		want = append(want, m[1])
	}
	for _, w := range want {
		if !strings.Contains(first, w) {
			t.Errorf("the overview lacks %q", w)
		}
	}
	// Without a command: the same overview, on stderr, exit 2.
	if code, out, errOut := runHelp(); code != 2 || out != "" || errOut != first {
		t.Errorf("no command: exit %d, stdout %q", code, out)
	}
}

func TestHelpMistakes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"serve", "--bogus"}, "flag provided but not defined: -bogus\nrun \"strata help serve\""},
		{[]string{"app", "create", "dig", "--bogus"}, "run \"strata help app create\""},
		{[]string{"app", "frobnicate"}, "unknown app subcommand"},
		{[]string{"help", "frobnicate"}, `no help for "frobnicate"`},
		{[]string{"version", "extra"}, "version takes no arguments"},
		{[]string{"migrate", "extra"}, "unexpected arguments"},
	} {
		code, out, errOut := runWith(envMap{"STRATA_DATA_DIR": t.TempDir()}, c.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errOut, c.msg)
		}
	}
}
