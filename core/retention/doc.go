// Package retention bounds what a Strata application keeps of its past
// (issue 35, "nothing grows without bound"): the record versions
// (sys_versions, one snapshot per update, delete and restore), the
// users' recent-records list (sys_history) and the application log
// (sys_app_log). Each application has its own
// settings, kept with its other settings (sys_settings) and edited by its
// admins at GET/PUT /<app>/api/retention:
//
//   - versions_keep: keep the N newest versions of each record (0: all);
//   - versions_days: drop versions older than N days (0: keep);
//   - history_days: drop recent-records entries older than N days (0: keep);
//   - log_days: drop application log entries older than N days (0: keep).
//
// Everything is kept by default. The rules are applied by the job kind
// retention.apply, which an admin starts (POST /<app>/api/retention/apply)
// and the server starts about once a day for each application that has a
// rule set (Claim: one node wins each day's run). The job deletes in
// batches (BatchFor: 5,000 rows on PostgreSQL, 1,000 on SQLite, whose
// saves wait for the batch under way), each statement in its own
// transaction.
//
// # What is never deleted
//
// A record's latest version is always kept: it is the record's version
// (its ETag: If-Match and the sync pull compare it) and the state its
// next three-way merge reads. A sync push merges a device's change
// against the record as it was at the device's base version, which is the
// content of the first version after that base (records.StateAt). When a
// version above a base has been pruned that state is gone; the pruning
// records, per record, the highest version id it deleted
// (sys_versions_pruned), and records.BaseAt then answers
// records.ErrBaseGone, so that the push treats every field the device set
// and the server holds differently as a conflict rather than merging
// against a later state (core/fieldsync).
package retention
