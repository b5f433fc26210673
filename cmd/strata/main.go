// Command strata is the Strata server and its administration commands.
//
//	strata serve [--addr 127.0.0.1:8080] [--data-dir ./data] [--plugin-dir ./bin/plugins]
//	strata app create NAME --email E [--password P] [--definition D] [--admin-name N]
//	strata app list
//	strata migrate
//	strata version
//
// Every flag also has an environment variable (see README.md, Configuration).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
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

const usage = `Strata — multi-application records service

Usage:
  strata serve [--addr ADDR] [--data-dir DIR] [--plugin-dir DIR]
  strata app create NAME --email EMAIL [--password PW] [--definition TEXT] [--admin-name NAME]
  strata app list
  strata migrate
  strata version

Environment: STRATA_ADDR, STRATA_DATA_DIR, STRATA_PLUGIN_DIR, DATABASE_URL,
SERVICE_ALLOW_NEW_APP, SERVICE_PUBLIC_URL, STRATA_LOG_LEVEL, STRATA_LOG_FORMAT.
`

// run executes one command and returns the process exit code.
func run(ctx context.Context, args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
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
	case "version", "--version", "-v":
		err = cmdVersion(e)
	case "help", "--help", "-h":
		fmt.Fprint(e.stdout, usage)
		return 0
	default:
		fmt.Fprintf(e.stderr, "strata: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if ue, ok := err.(usageError); ok {
			fmt.Fprintf(e.stderr, "strata: %s\n", ue.msg)
			return 2
		}
		fmt.Fprintf(e.stderr, "strata: %v\n", err)
		return 1
	}
	return 0
}

// usageError is a mistake in the command line (exit code 2).
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }
