package secrets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-archaeo/strata/core/scratch"
)

// EnvKey names the environment variable holding the instance key(s).
const EnvKey = "STRATA_SECRET_KEY"

// KeyFileName is the key file inside the data folder.
const KeyFileName = "secret.key"

// KeyFilePath is where the key file of a data folder lives.
func KeyFilePath(dataDir string) string { return filepath.Join(dataDir, KeyFileName) }

// Source says where a keyring came from.
type Source struct {
	Env  bool   // from STRATA_SECRET_KEY
	File string // else the key file's path
	Made bool   // the key file was created now
}

// Load returns the instance keyring: from STRATA_SECRET_KEY when set
// (comma-separated keys, the first current), else from the key file in
// dataDir, which is created with a new key (mode 0600, its folder 0700)
// when it does not exist.
func Load(dataDir string, getenv func(string) string) (*Keyring, Source, error) {
	if v := strings.TrimSpace(getenv(EnvKey)); v != "" {
		keys, err := parseKeys(strings.Split(v, ","))
		if err != nil {
			return nil, Source{}, fmt.Errorf("%s: %w", EnvKey, err)
		}
		kr, err := New(keys...)
		return kr, Source{Env: true}, err
	}
	if dataDir == "" {
		return nil, Source{}, fmt.Errorf("no %s and no data folder for the key file", EnvKey)
	}
	path := KeyFilePath(dataDir)
	src := Source{File: path}
	keys, err := ReadKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		k, gerr := GenerateKey()
		if gerr != nil {
			return nil, src, gerr
		}
		if err := WriteKeyFile(path, [][]byte{k}); err != nil {
			return nil, src, err
		}
		keys, src.Made = [][]byte{k}, true
	} else if err != nil {
		return nil, src, err
	}
	kr, err := New(keys...)
	return kr, src, err
}

func parseKeys(lines []string) ([][]byte, error) {
	var keys [][]byte
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, err := DecodeKey(l)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("no key")
	}
	return keys, nil
}

// ReadKeyFile reads the keys of a key file, the current one first. A file
// that others may read is refused: it would expose every secret.
func ReadKeyFile(path string) ([][]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s has mode %04o: others may read it; chmod 600 it", path, st.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	keys, err := parseKeys(strings.Split(string(raw), "\n"))
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return keys, nil
}

// WriteKeyFile replaces the key file atomically with keys (the first
// current), mode 0600, creating its folder 0700.
func WriteKeyFile(path string, keys [][]byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create key folder: %w", err)
	}
	var b strings.Builder
	b.WriteString("# Strata instance key(s): the first seals, the others only open. Keep this file secret (mode 600).\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s\n", EncodeKey(k))
	}
	tmp, err := scratch.CreateTemp(filepath.Dir(path), ".secret.key-*")
	if err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	return nil
}
