// Package testenv gives tests real storage on both engines: a SQLite data
// folder in t.TempDir(), and a PostgreSQL namespace of its own on the server
// named by TEST_DATABASE_URL (or a local server that answers). Everything a
// test creates is removed when it ends.
//
// PostgreSQL is optional for a quick local run, but when
// STRATA_REQUIRE_POSTGRES=1 (set by .ci/run) or CI=true a missing server
// fails the test instead of skipping it, so no suite is skipped silently.
package testenv
