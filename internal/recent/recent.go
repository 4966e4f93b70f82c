// Package recent holds a bounded, concurrency-safe map of recent answers for the caches of
// the send path (the phone numbers it parsed, the verifications it saw pending), whose
// memory must stay bounded under a flood without bookkeeping per entry. It imports nothing
// of otpgate.
package recent

import "sync"

// Map is a bounded map of recent answers, safe for concurrent use. It holds two
// generations of at most size entries: when the newer fills up, the older is dropped, and
// a hit in the older moves the entry up, so what is used stays and memory stays bounded
// without bookkeeping per entry.
type Map[K comparable, V any] struct {
	size     int
	mu       sync.Mutex
	cur, old map[K]V
}

// New returns a Map of at most size entries in each of its two generations.
func New[K comparable, V any](size int) *Map[K, V] {
	return &Map[K, V]{size: size, cur: make(map[K]V, size)}
}

// Get returns the entry of k, if there is one.
func (c *Map[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.cur[k]
	if !ok {
		if v, ok = c.old[k]; ok {
			c.putLocked(k, v)
		}
	}
	return v, ok
}

// Put stores v as the entry of k.
func (c *Map[K, V]) Put(k K, v V) {
	c.mu.Lock()
	c.putLocked(k, v)
	c.mu.Unlock()
}

// Drop forgets the entry of k.
func (c *Map[K, V]) Drop(k K) {
	c.mu.Lock()
	delete(c.cur, k)
	delete(c.old, k)
	c.mu.Unlock()
}

// putLocked stores v in the newer generation, starting a new one when it is full; c.mu
// is held.
func (c *Map[K, V]) putLocked(k K, v V) {
	if _, ok := c.cur[k]; !ok && len(c.cur) >= c.size {
		c.old, c.cur = c.cur, make(map[K]V, c.size)
	}
	c.cur[k] = v
	// An entry lives in one generation only, so that an older value never comes back.
	delete(c.old, k)
}
