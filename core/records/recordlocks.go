package records

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// hookLocks serialise, within this process, the saves of one record whose
// BeforeSave hooks are called: from the read their hooks are given to the
// save's commit. The version check (ErrHooksRaced) alone keeps the
// stored rows right, across processes too, but two clients saving one
// record in a loop would keep landing their commits inside each other's
// hook calls and run out of attempts; queued here, they take turns. It is
// a lock of this process's memory only: no database lock is held across a
// plugin call (SQLite's single writer stays free for other records).
var hookLocks = &keyedLocks{m: map[string]*keyedLock{}}

type keyedLocks struct {
	mu sync.Mutex
	m  map[string]*keyedLock
}

type keyedLock struct {
	ch   chan struct{} // holds a token while locked
	refs int           // holders and waiters
}

// lock takes the locks of keys (sorted first, so that two callers taking
// several never wait for each other in a cycle) and returns their release;
// it gives up when ctx ends.
func (k *keyedLocks) lock(ctx context.Context, keys []string) (func(), error) {
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	var held []string
	release := func() {
		for _, key := range held {
			k.unlock(key)
		}
	}
	for _, key := range keys {
		k.mu.Lock()
		l := k.m[key]
		if l == nil {
			l = &keyedLock{ch: make(chan struct{}, 1)}
			k.m[key] = l
		}
		l.refs++
		k.mu.Unlock()
		select {
		case l.ch <- struct{}{}:
			held = append(held, key)
		case <-ctx.Done():
			k.drop(key)
			release()
			return nil, ctx.Err()
		}
	}
	return release, nil
}

func (k *keyedLocks) unlock(key string) {
	k.mu.Lock()
	l := k.m[key]
	k.mu.Unlock()
	<-l.ch
	k.drop(key)
}

// drop forgets one holder or waiter; the last one removes the entry.
func (k *keyedLocks) drop(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l := k.m[key]; l != nil {
		if l.refs--; l.refs == 0 {
			delete(k.m, key)
		}
	}
}

// HookedSaveKeys are the keys of hookLocks for the records of ins that
// BeforeSaveMany will call a running hook for: updates only (a new record
// has no stored row to race on), and none when the scope is already in
// a transaction of its caller's (which serialises its saves itself; on
// SQLite it holds the single writer, and waiting here could wait on a
// save that waits for it).
func HookedSaveKeys(s *Scope, ins []*SaveInput) []string {
	if s.DB.InTx() {
		return nil
	}
	var keys []string
	for _, in := range ins {
		if in.ID > 0 && s.hooksConcern(in) {
			keys = append(keys, fmt.Sprintf("%s\x00%s\x00%d", s.App, s.Table.Name, in.ID))
		}
	}
	return keys
}

// LockHookedSaves takes this process's turn on the records keys name
// (HookedSaveKeys, of one or several tables) until the returned release;
// see hookLocks. A caller holding it across BeforeSaveMany and the save's
// transaction rarely meets ErrHooksRaced.
func LockHookedSaves(ctx context.Context, keys []string) (func(), error) {
	if len(keys) == 0 {
		return func() {}, nil
	}
	return hookLocks.lock(ctx, keys)
}
