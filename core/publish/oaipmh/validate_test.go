package oaipmh

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// validator keeps every response a test receives and, when the test ends,
// validates them all against OAI-PMH.xsd (and the metadata schemas) with
// xmllint, offline. Without xmllint it does nothing, unless
// STRATA_REQUIRE_XMLLINT=1, when the test fails.
type validator struct {
	t     *testing.T
	dir   string
	names map[string]string // file → request, for messages
	n     int
}

func newValidator(t *testing.T) *validator {
	t.Helper()
	if _, err := exec.LookPath("xmllint"); err != nil {
		if os.Getenv("STRATA_REQUIRE_XMLLINT") == "1" {
			t.Fatal("xmllint is required (STRATA_REQUIRE_XMLLINT=1) but not found")
		}
		t.Log("xmllint not found: responses are not validated against the XSD")
		return &validator{t: t}
	}
	v := &validator{t: t, dir: t.TempDir(), names: map[string]string{}}
	t.Cleanup(v.run)
	return v
}

func (v *validator) add(request string, body []byte) {
	if v.dir == "" {
		return
	}
	v.n++
	name := filepath.Join(v.dir, fmt.Sprintf("r%05d.xml", v.n))
	if err := os.WriteFile(name, body, 0o600); err != nil {
		v.t.Fatal(err)
	}
	v.names[name] = request
}

func (v *validator) run() {
	schemas, err := filepath.Abs("testdata/schemas")
	if err != nil {
		v.t.Fatal(err)
	}
	var files []string
	for f := range v.names {
		files = append(files, f)
	}
	for len(files) > 0 {
		batch := files[:min(400, len(files))]
		files = files[len(batch):]
		args := append([]string{"--noout", "--nonet", "--schema", filepath.Join(schemas, "all.xsd")}, batch...)
		cmd := exec.Command("xmllint", args...)
		cmd.Env = append(os.Environ(), "XML_CATALOG_FILES="+filepath.Join(schemas, "catalog.xml"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		bad := 0
		for _, line := range strings.Split(stderr.String(), "\n") {
			if line == "" || strings.HasSuffix(line, " validates") {
				continue
			}
			bad++
			if bad <= 10 {
				file, _, _ := strings.Cut(line, ":")
				body, _ := os.ReadFile(file)
				v.t.Errorf("xmllint: %s\n  request: %s\n  response: %.2000s", line, v.names[file], body)
			}
		}
		if err != nil && bad == 0 {
			v.t.Errorf("xmllint failed: %v: %s", err, stderr.String())
		}
	}
	v.t.Logf("xmllint validated %d responses", v.n)
}
