package otp

import "sync"

// recent is a bounded map of recent answers, safe for concurrent use. It holds two
// generations of at most size entries: when the newer fills up, the older is dropped, and
// a hit in the older moves the entry up, so what is used stays and memory stays bounded
// without bookkeeping per entry.
type recent[K comparable, V any] struct {
	size     int
	mu       sync.Mutex
	cur, old map[K]V
}

func newRecent[K comparable, V any](size int) *recent[K, V] {
	return &recent[K, V]{size: size, cur: make(map[K]V, size)}
}

// get returns the entry of k, if there is one.
func (c *recent[K, V]) get(k K) (V, bool) {
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

// put stores v as the entry of k.
func (c *recent[K, V]) put(k K, v V) {
	c.mu.Lock()
	c.putLocked(k, v)
	c.mu.Unlock()
}

// drop forgets the entry of k.
func (c *recent[K, V]) drop(k K) {
	c.mu.Lock()
	delete(c.cur, k)
	delete(c.old, k)
	c.mu.Unlock()
}

// putLocked stores v in the newer generation, starting a new one when it is full; c.mu
// is held.
func (c *recent[K, V]) putLocked(k K, v V) {
	if _, ok := c.cur[k]; !ok && len(c.cur) >= c.size {
		c.old, c.cur = c.cur, make(map[K]V, c.size)
	}
	c.cur[k] = v
	// An entry lives in one generation only, so that an older value never comes back.
	delete(c.old, k)
}
