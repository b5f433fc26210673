// Package publishtest is a test-support kit for the open-data publication
// (issue 34): validators that check what core/publish writes against the
// standards' own schemas, offline. It is imported only by _test files —
// never by a program — and it reads the schemas, contexts and XSDs that the
// publish packages keep under their testdata directories, found by walking
// up from the working directory (a test's package directory) to go.mod.
//
// The checks:
//   - LinkedArt: the Linked Art JSON schemas (object.json, place.json);
//     LinkedArtExpansion: JSON-LD expansion with nothing dropped and every
//     property in the CRM / Linked Art namespaces.
//   - ExpandJSONLD: json-gold expansion with a document loader that serves
//     only the Linked Art and RO-Crate 1.2 contexts held in testdata and
//     fails on every other URL; ROCrate: the descriptor's and the root data
//     entity's rules of RO-Crate 1.2, on the expanded graph.
//   - DataCiteXML and OAIPMH: xmllint --noout --nonet against the DataCite
//     kernel-4 XSD and the OAI-PMH 2.0 XSD (with the oai_dc and DataCite
//     payload schemas, through the oaipmh catalog). Without xmllint they
//     return an error wrapping ErrNoXMLLint, which a test may t.Skip on,
//     unless STRATA_REQUIRE_XMLLINT=1.
//   - DataPackage: the Frictionless Data Package 2.0 profile.
//   - IIIFManifest: the IIIF Presentation 3 rules the presentation
//     validator's schema encodes (the schema itself may not be
//     redistributed), and that every file the manifest's level 0 image
//     services imply (info.json, sizes, tiles) exists and is a JPEG of the
//     size its URL names.
package publishtest
