// Package ratelimit slows repeated attempts (sign-in, reset requests,
// API-key guesses) before the account lock of SPEC §3.1 applies, and finds
// the client address a limit is keyed by.
//
// Counters live in the memory of each node (Limiter). On PostgreSQL, where
// several nodes share one database, a Limiter also takes each event it
// allows from a budget kept in the database (Shared), so a limit holds
// across nodes without making every refused attempt of a flood a database
// write. The hard cap is still the account lock, which lives in the
// database (five consecutive failures lock the account for 15 minutes).
package ratelimit
