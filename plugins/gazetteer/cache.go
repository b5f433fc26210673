package main

import (
	"sync"
	"time"
)

// maxEntries bounds the cache; past it, the oldest entry goes.
const maxEntries = 5000

// cache keeps provider answers for the instance (one plugin process serves
// every app). An expired entry is kept: it is what a client gets, marked
// stale, while the provider is down.
type cache struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]entry
}

type entry struct {
	v  any
	at time.Time
}

func newCache(now func() time.Time) *cache { return &cache{now: now, m: map[string]entry{}} }

// get returns the value under key, whether it is younger than ttl, and
// whether there is one.
func (c *cache) get(key string, ttl time.Duration) (v any, fresh, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		return nil, false, false
	}
	return e.v, c.now().Sub(e.at) < ttl, true
}

func (c *cache) put(key string, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, exists := c.m[key]; !exists && len(c.m) >= maxEntries {
		c.evict()
	}
	c.m[key] = entry{v: v, at: c.now()}
}

// evict drops the oldest entry (a linear scan: it runs once per insert
// past the bound, over at most maxEntries entries).
func (c *cache) evict() {
	var oldest string
	var at time.Time
	for k, e := range c.m {
		if oldest == "" || e.at.Before(at) {
			oldest, at = k, e.at
		}
	}
	delete(c.m, oldest)
}
