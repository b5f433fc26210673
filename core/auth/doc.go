// Package auth holds accounts and what decides who may do what: password
// hashing, privilege levels, and (as the access issue lands) login, lockout,
// JWT, API keys and per-table privileges. It knows nothing of HTTP.
package auth
