package inmem

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"otpgate/internal/otp"
)

// BeginSend implements otp.Store.
func (s *Store) BeginSend(ctx context.Context, p otp.BeginSend) (otp.SendStart, error) {
	if err := alive("begin send", ctx); err != nil {
		return otp.SendStart{}, err
	}
	newID, ok1 := canonID(p.NewVerificationID)
	sendID, ok2 := canonID(p.SendID)
	if !ok1 || !ok2 {
		return otp.SendStart{}, errors.New("inmem: begin send: invalid use of the store: ids must be uuids")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.sends[sendID]; dup {
		return otp.SendStart{}, fmt.Errorf("inmem: begin send: send %s exists", sendID)
	}
	now := ts(p.Now)
	v := s.verifications[s.pending[p.Phone]]
	if v != nil && p.Now.Before(v.ExpiresAt) {
		if v.Sends >= p.MaxSends {
			return otp.SendStart{}, fmt.Errorf("inmem: begin send: %w", &otp.ErrSendBudget{MaxSends: p.MaxSends, ExpiresAt: v.ExpiresAt})
		}
		v.Sends++
		v.ExpiresAt = ts(p.Now.Add(p.TTL))
		v.CodeHashes = append(v.CodeHashes, slices.Clone(p.CodeHash(v.ID)))
		s.addSend(sendID, v.ID, p, now)
		return otp.SendStart{Verification: clone(v)}, nil
	}
	if _, dup := s.verifications[newID]; dup {
		return otp.SendStart{}, fmt.Errorf("inmem: begin send: verification %s exists", newID)
	}
	if v != nil { // pending but past its expiry
		v.Status, v.ClosedAt = otp.StatusExpired, now
	}
	v = &otp.Verification{
		ID: newID, Phone: p.Phone, Channel: p.Channel, Locale: p.Locale, Status: otp.StatusPending,
		CodeHashes: [][]byte{slices.Clone(p.CodeHash(newID))}, Sends: 1, MaxAttempts: p.MaxAttempts,
		ClientIP: p.ClientIP, CreatedAt: now, ExpiresAt: ts(p.Now.Add(p.TTL)),
	}
	s.verifications[newID] = v
	s.byPhone[p.Phone] = append(s.byPhone[p.Phone], newID)
	s.pending[p.Phone] = newID
	s.addSend(sendID, newID, p, now)
	return otp.SendStart{Verification: clone(v), Created: true}, nil
}

func (s *Store) addSend(id, verificationID string, p otp.BeginSend, now time.Time) {
	s.sends[id] = &otp.SendRow{
		ID: id, VerificationID: verificationID, Time: now, Phone: p.Phone, ClientIP: p.ClientIP,
		SendStatus: otp.SendSending, Provider: p.Provider, Shadow: p.Shadow, Updated: now,
	}
}

// FinishSend implements otp.Store.
func (s *Store) FinishSend(ctx context.Context, p otp.FinishSend) error {
	if err := alive("finish send", ctx); err != nil {
		return err
	}
	if p.Status != otp.SendSent && p.Status != otp.SendFailed {
		return fmt.Errorf("inmem: finish send: invalid use of the store: status %q", p.Status)
	}
	id, _ := canonID(p.SendID)
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.sends[id]
	if r == nil || r.VerificationID == "" {
		return fmt.Errorf("inmem: finish send: %w", otp.ErrNotFound)
	}
	r.SendStatus, r.ProviderMessageID, r.Error, r.Updated = p.Status, p.ProviderID, p.Error, ts(p.Now)
	v := s.verifications[r.VerificationID]
	if !p.Undo || v.Status != otp.StatusPending {
		return nil
	}
	if p.Created && v.Sends <= 1 {
		v.Status, v.ClosedAt = otp.StatusCanceled, ts(p.Now)
		delete(s.pending, v.Phone)
	}
	v.Sends = max(v.Sends-1, 0)
	return nil
}
