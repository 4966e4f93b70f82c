package otp

import "sync"

// phoneCacheSize bounds the numbers a phoneCache holds in each of its two generations.
const phoneCacheSize = 4096

// phoneCache remembers recent answers of NormalizePhone, which spends more time in the
// phone library's regular expressions than the rest of a refused send together: a flood of
// sends for a few numbers, as abuse looks, is then answered from memory. Answers never
// change, so they are always right; the cache only bounds what it keeps. It holds two
// generations of at most phoneCacheSize entries: when the newer fills up, the older is
// dropped, and a hit in the older moves the entry up.
type phoneCache struct {
	mu       sync.Mutex
	cur, old map[phoneKey]phoneAnswer
}

type phoneKey struct{ raw, defaultRegion string }

type phoneAnswer struct {
	e164, region string
	err          error
}

func newPhoneCache() *phoneCache {
	return &phoneCache{cur: make(map[phoneKey]phoneAnswer, phoneCacheSize)}
}

// normalize is NormalizePhone(raw, defaultRegion), remembered.
func (c *phoneCache) normalize(raw, defaultRegion string) (e164, region string, err error) {
	k := phoneKey{raw, defaultRegion}
	c.mu.Lock()
	a, ok := c.cur[k]
	if !ok {
		if a, ok = c.old[k]; ok {
			c.put(k, a)
		}
	}
	c.mu.Unlock()
	if ok {
		return a.e164, a.region, a.err
	}
	e164, region, err = NormalizePhone(raw, defaultRegion)
	c.mu.Lock()
	c.put(k, phoneAnswer{e164, region, err})
	c.mu.Unlock()
	return e164, region, err
}

// put stores an answer in the newer generation, starting a new one when it is full; c.mu
// is held.
func (c *phoneCache) put(k phoneKey, a phoneAnswer) {
	if len(c.cur) >= phoneCacheSize {
		c.old, c.cur = c.cur, make(map[phoneKey]phoneAnswer, phoneCacheSize)
	}
	c.cur[k] = a
}

// normalizePhone is NormalizePhone with the service's default region, through its cache.
func (s *Service) normalizePhone(raw string) (e164, region string, err error) {
	if s.phones == nil {
		return NormalizePhone(raw, s.cfg.DefaultRegion)
	}
	return s.phones.normalize(raw, s.cfg.DefaultRegion)
}
