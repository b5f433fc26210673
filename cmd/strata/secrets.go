package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/secrets"
)

// cmdSecrets serves strata secrets SUBCOMMAND.
func cmdSecrets(ctx context.Context, args []string, e env) error {
	if len(args) == 0 {
		return usageError{"secrets needs a subcommand: rotate", "secrets"}
	}
	switch {
	case args[0] == "help" && len(args) > 1: // strata secrets help rotate
		return cmdHelp(append([]string{"secrets"}, args[1:]...), e)
	case isHelp(args[0]):
		return helpRequest{"secrets"}
	case args[0] == "rotate":
		return cmdSecretsRotate(ctx, args[1:], e)
	}
	return usageError{fmt.Sprintf("unknown secrets subcommand %q", args[0]), "secrets"}
}

// cmdSecretsRotate re-seals every application's secret settings with a new
// instance key (or, with STRATA_SECRET_KEY, with the first key it lists),
// sealing on the way any value still stored in clear.
//
// With the key file, the new key is written first in the file with the old
// ones kept after it, so that an interrupted run leaves every value
// readable; once every application is done, the file keeps the new key
// alone.
func cmdSecretsRotate(ctx context.Context, args []string, e env) error {
	cfg, rest, err := loadConfig("secrets rotate", args, e, storageFlags)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q", rest), "secrets rotate"}
	}
	if err := needDataDir(cfg); err != nil {
		return err
	}
	log := newLogger(cfg, e.stderr)
	keys, src, err := secrets.Load(cfg.DataDir, e.getenv)
	if err != nil {
		return fmt.Errorf("instance secret key: %w", err)
	}
	var newKey []byte
	if !src.Env {
		old, err := secrets.ReadKeyFile(src.File)
		if err != nil {
			return err
		}
		if newKey, err = secrets.GenerateKey(); err != nil {
			return err
		}
		if err := secrets.WriteKeyFile(src.File, append([][]byte{newKey}, old...)); err != nil {
			return err
		}
		if keys, err = secrets.New(append([][]byte{newKey}, old...)...); err != nil {
			return err
		}
	}
	n, appsDone, err := resealAll(ctx, cfg, keys, log)
	if err != nil {
		return fmt.Errorf("%w (run strata secrets rotate again: every value stays readable meanwhile)", err)
	}
	if !src.Env {
		if err := secrets.WriteKeyFile(src.File, [][]byte{newKey}); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "new key %s written to %s; %d secrets of %d applications sealed with it\n",
			keys.CurrentID(), src.File, n, appsDone)
		fmt.Fprintln(e.stdout, "restart running servers so that they load the new key")
		return nil
	}
	fmt.Fprintf(e.stdout, "%d secrets of %d applications sealed with key %s (the first of %s)\n",
		n, appsDone, keys.CurrentID(), secrets.EnvKey)
	if len(keys.IDs()) > 1 {
		fmt.Fprintf(e.stdout, "the other keys of %s are no longer needed and may be removed\n", secrets.EnvKey)
	}
	return nil
}

// resealAll runs ResealSecrets on every application, going on past a
// failing one and reporting all failures together.
func resealAll(ctx context.Context, cfg config.Config, keys *secrets.Keyring, log interface {
	Error(string, ...any)
}) (sealed, done int, err error) {
	reg, err := openRegistryWith(ctx, cfg, keys, newLogger(cfg, discard{}))
	if err != nil {
		return 0, 0, err
	}
	defer reg.Close()
	names, err := reg.List(ctx)
	if err != nil {
		return 0, 0, err
	}
	var errList []error
	for _, name := range names {
		a, err := reg.Get(ctx, name)
		if err == nil {
			var n int
			n, err = a.ResealSecrets(ctx)
			sealed += n
		}
		if err != nil {
			log.Error("secrets not re-sealed", "app", name, "err", err)
			errList = append(errList, fmt.Errorf("app %s: %w", name, err))
			continue
		}
		done++
	}
	return sealed, done, errors.Join(errList...)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
