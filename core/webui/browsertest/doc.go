// Package browsertest runs the web application's end-to-end scenarios
// (web/e2e/*.mjs) in Debian's headless Chromium, driven by playwright-core,
// against a real Strata server on each engine: the demo data, the
// chronology, osteology, radiocarbon, gazetteer, refmgr and sequence plugins as real
// processes, local stand-ins of Pleiades and the Zotero API, a local mail
// provider and a local OAuth provider. It also runs the component tests
// (vitest). Without Chromium or web/node_modules the tests skip, unless
// STRATA_REQUIRE_BROWSER=1 (as .ci/run sets).
package browsertest
