package otp

import (
	"context"
	"strings"
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
	id, ok := s.pending.Get(addressKey{appID, address})
	if !ok {
		return Verification{}, false
	}
	v, ok := s.seen.Get(id)
	if !ok || v.Status != StatusPending || v.Address != address || v.AppID != appID {
		return Verification{}, false
	}
	return v, true
}

// lastSeen is the verification with id as this instance last saw it, else as stored.
func (s *Service) lastSeen(ctx context.Context, id string) (Verification, error) {
	if v, ok := s.seen.Get(id); ok {
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
	s.seen.Put(id, v)
	if v.Status == StatusPending {
		s.pending.Put(addressKey{v.AppID, v.Address}, id)
	}
}

// forget drops what this instance remembers of id, after a failure left it unknown.
func (s *Service) forget(id string) {
	s.seen.Drop(strings.ToLower(id))
}

// Forget drops what this instance remembers of address's verifications in apps, after an
// erasure: the other instances' memories go as their entries are replaced.
func (s *Service) Forget(apps []App, address string) {
	for _, a := range apps {
		k := addressKey{a.ID, address}
		if id, ok := s.pending.Get(k); ok {
			s.seen.Drop(id)
			s.pending.Drop(k)
		}
	}
}
