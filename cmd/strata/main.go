// Command strata is the Strata server and its administration commands.
//
//	strata serve [--addr 127.0.0.1:8080] [--data-dir ./data] [--plugin-dir ./bin/plugins] [--demo]
//	strata app create NAME --email E [--password P] [--definition D] [--admin-name N] [--data-dir ./data]
//	strata app list [--data-dir ./data]
//	strata migrate [--data-dir ./data]
//	strata secrets rotate [--data-dir ./data]
//	strata plugin install FILE [--plugin-dir ./bin/plugins]
//	strata plugin list [--plugin-dir ./bin/plugins]
//	strata plugin new NAME [--dir ./NAME] [--module example.org/NAME]
//	strata version
//	strata help [COMMAND [SUBCOMMAND]]
//
// Every command answers -h, --help and help COMMAND with its flags,
// defaults and environment variables (help.go); see also README.md,
// Configuration.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], env{getenv: os.Getenv, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr})
	stop()
	os.Exit(code)
}

// env is what a command may touch of the outside world, so tests can run
// commands in-process.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// ready, when set, is told the address serve listens on.
	ready func(addr string)
}

// run executes one command and returns the process exit code.
func run(ctx context.Context, args []string, e env) int {
	if len(args) == 0 {
		writeUsage(e.stderr)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], e)
	case "app":
		err = cmdApp(ctx, args[1:], e)
	case "migrate":
		err = cmdMigrate(ctx, args[1:], e)
	case "secrets":
		err = cmdSecrets(ctx, args[1:], e)
	case "files":
		err = cmdFiles(ctx, args[1:], e)
	case "plugin":
		err = cmdPlugin(ctx, args[1:], e)
	case "version", "--version", "-v":
		err = cmdVersion(args[1:], e)
	case "help", "--help", "-help", "-h":
		err = cmdHelp(args[1:], e)
	default:
		fmt.Fprintf(e.stderr, "strata: unknown command %q\n\n", args[0])
		writeUsage(e.stderr)
		return 2
	}
	if err != nil {
		var hr helpRequest
		if errors.As(err, &hr) {
			findCommand(strings.Fields(hr.command)...).writeHelp(e.stdout)
			return 0
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(e.stderr, "strata: %s\n", ue.msg)
			if ue.command != "" {
				fmt.Fprintf(e.stderr, "run \"strata help %s\" for its usage\n", ue.command)
			}
			return 2
		}
		fmt.Fprintf(e.stderr, "strata: %v\n", err)
		return 1
	}
	return 0
}

// usageError is a mistake in the command line (exit code 2); command, when
// set, is the command whose help to point at.
type usageError struct{ msg, command string }

func (u usageError) Error() string { return u.msg }
