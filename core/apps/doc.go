// Package apps is the tenant registry: it validates application names,
// creates an application atomically (database or schema, system tables,
// settings, JWT secret, first super_admin), opens applications on demand
// and keeps them open, and brings every application's system tables up to
// date at start-up.
package apps
