package otp

import (
	"otpgate/internal/contact"
	"otpgate/internal/recent"
)

// phoneCacheSize bounds the numbers a phoneCache holds in each of its two generations.
const phoneCacheSize = 4096

// phoneCache remembers recent answers of contact.NormalizePhone, which spends more time in the
// phone library's regular expressions than the rest of a refused send together: a flood of
// sends for a few numbers, as abuse looks, is then answered from memory. Answers never
// change, so they are always right; the cache only bounds what it keeps.
type phoneCache struct {
	*recent.Map[phoneKey, phoneAnswer]
}

type phoneKey struct{ raw, defaultRegion string }

type phoneAnswer struct {
	e164, region string
	err          error
	// kind is the number's type, found the first time it is asked for.
	kind string
}

func newPhoneCache() *phoneCache {
	return &phoneCache{recent.New[phoneKey, phoneAnswer](phoneCacheSize)}
}

// normalize is contact.NormalizePhone(raw, defaultRegion), remembered.
func (c *phoneCache) normalize(raw, defaultRegion string) (e164, region string, err error) {
	k := phoneKey{raw, defaultRegion}
	if a, ok := c.Get(k); ok {
		return a.e164, a.region, a.err
	}
	e164, region, err = contact.NormalizePhone(raw, defaultRegion)
	c.Put(k, phoneAnswer{e164: e164, region: region, err: err})
	return e164, region, err
}

// typeKey marks the cache's entries of number types: no region is spelled so.
const typeKey = "\x00type"

// kind is contact.PhoneType(e164), remembered apart from the normalised answers.
func (c *phoneCache) kind(e164 string) string {
	k := phoneKey{raw: e164, defaultRegion: typeKey}
	if a, ok := c.Get(k); ok && a.kind != "" {
		return a.kind
	}
	kind := contact.PhoneType(e164)
	c.Put(k, phoneAnswer{e164: e164, kind: kind})
	return kind
}

// phoneType is contact.PhoneType through the service's cache.
func (s *Service) phoneType(e164 string) string {
	if s.phones == nil {
		return contact.PhoneType(e164)
	}
	return s.phones.kind(e164)
}

// normalizePhone is contact.NormalizePhone with the service's default region, through its cache.
func (s *Service) normalizePhone(raw string) (e164, region string, err error) {
	if s.phones == nil {
		return contact.NormalizePhone(raw, s.cfg.DefaultRegion)
	}
	return s.phones.normalize(raw, s.cfg.DefaultRegion)
}
