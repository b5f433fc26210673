package publishtest

import (
	"bytes"
	"fmt"
	"os"

	"github.com/piprate/json-gold/ld"
)

// ROCrateContext is the RO-Crate 1.2 context URL a crate's metadata names.
const ROCrateContext = "https://w3id.org/ro/crate/1.2/context"

// ExpandBase is the base IRI ExpandJSONLD resolves relative IRIs against
// (an RO-Crate's "./" becomes ExpandBase itself). The .invalid domain
// cannot be mistaken for a real address.
const ExpandBase = "http://crate.invalid/"

// localContexts maps the context URLs the loader serves to their files.
var localContexts = map[string]string{
	LinkedArtContext: linkedArtContext,
	ROCrateContext:   roCrateContext,
}

// localLoader serves the contexts of localContexts from testdata and fails
// on every other URL, so expansion never reaches the network.
type localLoader struct{}

// LoadDocument implements ld.DocumentLoader.
func (localLoader) LoadDocument(u string) (*ld.RemoteDocument, error) {
	rel, ok := localContexts[u]
	if !ok {
		return nil, ld.NewJsonLdError(ld.LoadingDocumentFailed, "publishtest: offline: no local copy of "+u)
	}
	fn, err := rootPath(rel)
	if err != nil {
		return nil, ld.NewJsonLdError(ld.LoadingDocumentFailed, err)
	}
	b, err := os.ReadFile(fn)
	if err != nil {
		return nil, ld.NewJsonLdError(ld.LoadingDocumentFailed, err)
	}
	doc, err := ld.DocumentFromReader(bytes.NewReader(b))
	if err != nil {
		return nil, ld.NewJsonLdError(ld.LoadingDocumentFailed, fmt.Errorf("%s: %w", fn, err))
	}
	return &ld.RemoteDocument{DocumentURL: u, Document: doc}, nil
}

// ExpandJSONLD expands doc with json-gold (JSON-LD 1.1), loading only the
// Linked Art and RO-Crate 1.2 contexts, from testdata; any other remote
// context is an error. Relative IRIs resolve against ExpandBase. The
// processor runs in safe mode: a term or a relative IRI expansion would
// drop makes it fail instead.
func ExpandJSONLD(doc []byte) (expanded []any, err error) {
	return expand(doc, ExpandBase, true)
}

func expand(raw []byte, base string, safe bool) ([]any, error) {
	doc, err := ld.DocumentFromReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("publishtest: JSON-LD: not JSON: %w", err)
	}
	opts := ld.NewJsonLdOptions(base)
	opts.DocumentLoader = localLoader{}
	opts.SafeMode = safe
	out, err := ld.NewJsonLdProcessor().Expand(doc, opts)
	if err != nil {
		return nil, fmt.Errorf("publishtest: JSON-LD expansion: %w", err)
	}
	return out, nil
}
