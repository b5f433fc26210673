// Package fieldsync is offline field recording's sync (issue 32): a
// device keeps copies of some tables and sends back what it changed while
// it had no network.
//
//   - Pull (pull.go): GET /sync/{tb}?checkpoint=C answers the rows of tb
//     changed since C as the caller may read them, through the records
//     gate, and the ids that left the caller's view, with no values.
//     Checkpoints are ids of the app's change log (core/changes): nothing
//     reads "what changed" any other way (DESIGN §10).
//   - Push (push.go, conflicts.go): POST /sync/push applies a device's
//     mutations with the save's rules, once each (mutation_id), in each
//     device's order (seq), merging field by field against the version the
//     device started from (records.Merge3); a field changed on both sides
//     becomes a conflict to resolve.
//   - Uploads (upload*.go): photos taken offline arrive in resumable parts,
//     kept in the app's database (any node goes on with them), and become
//     files through the files area's own upload rules, linked to their
//     record, possibly one made offline (temp_id).
package fieldsync
