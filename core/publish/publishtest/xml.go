package publishtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNoXMLLint is wrapped by the XML validators' error when xmllint is not
// installed and STRATA_REQUIRE_XMLLINT is not 1: a test may t.Skip on it
// (errors.Is). With STRATA_REQUIRE_XMLLINT=1 a missing xmllint is an
// ordinary error, and the test fails.
var ErrNoXMLLint = errors.New("publishtest: xmllint not installed")

// xmllint validates doc against schema (a path relative to the root) with
// xmllint --noout --nonet, with catalog (relative to the root, or "") as
// XML_CATALOG_FILES so schema imports by URL resolve to local copies.
func xmllint(what string, doc []byte, schema, catalog string) error {
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("STRATA_REQUIRE_XMLLINT") == "1" {
			return fmt.Errorf("publishtest: %s: xmllint is required (STRATA_REQUIRE_XMLLINT=1) but not found: %w", what, err)
		}
		return fmt.Errorf("%s: %w", what, ErrNoXMLLint)
	}
	xsd, err := rootPath(schema)
	if err != nil {
		return err
	}
	// The document goes through stdin ("-"), so nothing is left on disk.
	cmd := exec.Command(bin, "--noout", "--nonet", "--schema", xsd, "-")
	cmd.Stdin = bytes.NewReader(doc)
	cmd.Env = os.Environ()
	if catalog != "" {
		cat, err := rootPath(catalog)
		if err != nil {
			return err
		}
		cmd.Env = append(cmd.Env, "XML_CATALOG_FILES="+cat)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		const max = 4000
		if len(msg) > max {
			msg = msg[:max] + "…"
		}
		return fmt.Errorf("publishtest: %s does not validate against %s: %w\n%s", what, filepath.Base(xsd), err, msg)
	}
	return nil
}

// DataCiteXML validates a DataCite resource against the kernel-4 XSD held
// in core/publish/datacite/testdata.
func DataCiteXML(x []byte) error {
	return xmllint("DataCite XML", x, dataCiteXSD, "")
}

// OAIPMH validates an OAI-PMH 2.0 response against OAI-PMH.xsd, the
// metadata payloads included (the envelope's xs:any is strict): oai_dc
// through oai_dc.xsd and DataCite through the kernel-4 XSD, all local,
// resolved through the oaipmh tests' catalog.
func OAIPMH(x []byte) error {
	return xmllint("OAI-PMH response", x, oaiAllXSD, oaiSchemas+"/catalog.xml")
}
