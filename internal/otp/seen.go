package otp

import (
	"context"
	"strings"
	"sync"
)

// seenSize bounds the verifications an instance remembers in each of two generations.
const seenSize = 4096

// A check by id needs the verification's phone before the limiter runs (the check
// limits are keyed by phone) and its state for the decision; a check by phone needs the
// phone's newest verification. The instance that sent the code, or checked it last,
// already holds both: remembering them saves a read per check.
// A remembered verification may be stale (another instance checked or resent it, the
// expiry job closed it); that is safe, because the phone and app of an id never change
// and the store saves a decision made on a Seen verification only while the row is
// unchanged, and otherwise decides again on the stored row (Store.Check). A check by
// phone uses only a remembered pending verification: while it is unchanged it is the
// phone's newest, since the next one can only be created after it closed.
// A resend needs the id of the phone's pending verification, to which its code's hash is
// tied: a remembered pending one lets the store count the resend in one statement, and a
// stale one costs no more than none, since the store counts on the pending verification it
// holds (Store.BeginSend).

// addressKey names the pending verification of one address (phone or email) of one app.
type addressKey struct{ app, address string }

// seenPending is the pending verification of the address this instance last saw, if any.
func (s *Service) seenPending(appID, address string) (Verification, bool) {
	id, ok := s.pending.get(addressKey{appID, address})
	if !ok {
		return Verification{}, false
	}
	v, ok := s.seen.get(id)
	if !ok || v.Status != StatusPending || v.Address != address || v.AppID != appID {
		return Verification{}, false
	}
	return v, true
}

// lastSeen is the verification with id as this instance last saw it, else as stored.
func (s *Service) lastSeen(ctx context.Context, id string) (Verification, error) {
	if v, ok := s.seen.get(id); ok {
		return v, nil
	}
	ctx, cancel := Bounded(ctx, s.cfg.StoreTimeout)
	defer cancel()
	v, err := s.store.Verification(ctx, id)
	if err == nil {
		s.remember(v)
	}
	return v, err
}

// remember keeps v as this instance's latest view of it.
func (s *Service) remember(v Verification) {
	if v.ID == "" {
		return
	}
	id := strings.ToLower(v.ID)
	s.seen.put(id, v)
	if v.Status == StatusPending {
		s.pending.put(addressKey{v.AppID, v.Address}, id)
	}
}

// forget drops what this instance remembers of id, after a failure left it unknown.
func (s *Service) forget(id string) {
	s.seen.drop(strings.ToLower(id))
}

// Forget drops what this instance remembers of address's verifications in apps, after an
// erasure: the other instances' memories go as their entries are replaced.
func (s *Service) Forget(apps []App, address string) {
	for _, a := range apps {
		k := addressKey{a.ID, address}
		if id, ok := s.pending.get(k); ok {
			s.seen.drop(id)
			s.pending.drop(k)
		}
	}
}

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
