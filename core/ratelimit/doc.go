// Package ratelimit slows repeated attempts (sign-in, reset requests,
// API-key guesses) before the account lock of SPEC §3.1 applies, and finds
// the client address a limit is keyed by.
//
// Counters live in the memory of each node. Strata's nodes are otherwise
// stateless and may share one PostgreSQL (DESIGN §8); counters in the
// database would make the limits hold across nodes, but every attempt —
// including every attempt of a flood — would then cost a database write,
// which turns the limiter into a way to load the shared database, and the
// SQLite engine has no instance-wide database to hold them. So a limit here
// is per node: behind a load balancer with N nodes an address gets at most
// N times the configured rate. The hard cap that holds across nodes is the
// account lock, which lives in the database (five consecutive failures lock
// the account for 15 minutes).
package ratelimit
