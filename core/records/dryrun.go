package records

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/strata-archaeo/strata/core/store"
)

// dryIDs hands out the ids of rows a dry run inserts on PostgreSQL.
type dryIDs struct{ next atomic.Int64 }

// DryRun returns a copy of s for saves that are made only to be rolled
// back (an import's dry run: every row goes through the real save, so the
// answer is what the real run would meet). PostgreSQL never rolls a
// sequence back: such a run of 100 rows took the next 100 record ids, and
// a version id per updated record, from the real run. So on PostgreSQL
// the rows and versions a dry run inserts are given ids from a range no
// sequence reaches (2^62 up, one random start per run, so concurrent dry
// runs rarely meet; when they do, one waits for the other's rollback),
// never from a sequence. SQLite's rollback restores its sequences
// (sqlite_sequence) itself, so there the ids come as for a save.
// AfterSave hooks are not called: nothing is saved.
func (s *Scope) DryRun() *Scope {
	c := *s
	c.dry = &dryIDs{}
	c.dry.next.Store(1<<62 + rand.Int64N(1<<61))
	return &c
}

// DryRunID is the id a row written for this scope must be given, or 0 to
// let its table's sequence give it: for rows other packages insert in a
// dry run (geodata features).
func (s *Scope) DryRunID() int64 { return s.explicitID() }

// explicitID is the id a row this scope inserts must be given, or 0 to
// let the table's sequence give it.
func (s *Scope) explicitID() int64 {
	if s.dry == nil || s.DB.Engine != store.Postgres {
		return 0
	}
	return s.dry.next.Add(1)
}
