package publishtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// modulePath is the module whose root holds the testdata this kit reads.
const modulePath = "github.com/strata-archaeo/strata"

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// Root returns the repository root: the nearest directory at or above the
// working directory whose go.mod declares the Strata module.
func Root() (string, error) {
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = fmt.Errorf("publishtest: working directory: %w", err)
			return
		}
		for {
			b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && bytes.Contains(b, []byte("module "+modulePath+"\n")) {
				rootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				rootErr = errors.New("publishtest: no go.mod of " + modulePath + " above the working directory")
				return
			}
			dir = parent
		}
	})
	return rootDir, rootErr
}

// rootPath returns the absolute path of a file given relative to the root.
func rootPath(rel string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, filepath.FromSlash(rel)), nil
}

// Where the publish packages keep what the validators read.
const (
	linkedArtSchemas = "core/publish/linkedart/testdata/schema"
	linkedArtContext = "core/publish/linkedart/testdata/context/linked-art.json"
	roCrateContext   = "core/publish/crate/testdata/rocrate/context-1.2.jsonld"
	frictionless     = "core/publish/crate/testdata/frictionless"
	dataCiteXSD      = "core/publish/datacite/testdata/kernel-4/metadata.xsd"
	oaiSchemas       = "core/publish/oaipmh/testdata/schemas"
	oaiAllXSD        = "core/publish/publishtest/testdata/oai-pmh-all.xsd"
)
