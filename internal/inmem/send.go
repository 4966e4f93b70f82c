package inmem

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
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
	p.AppID = otp.StoredAppID(p.AppID)
	pk := phoneKey(p.AppID, p.Phone)
	v := s.verifications[s.pending[pk]]
	if v != nil && p.Now.Before(v.ExpiresAt) {
		if v.Sends >= p.MaxSends {
			return otp.SendStart{}, fmt.Errorf("inmem: begin send: %w", &otp.ErrSendBudget{MaxSends: p.MaxSends, ExpiresAt: v.ExpiresAt})
		}
		v.Sends++
		v.ExpiresAt = ts(p.Now.Add(p.TTL))
		v.CodeHashes = append(v.CodeHashes, slices.Clone(p.CodeHash(v.ID)))
		if !p.Transaction.IsZero() {
			v.Transaction = p.Transaction
		}
		s.addSend(sendID, v.ID, p, now)
		return otp.SendStart{Verification: clone(v)}, nil
	}
	if _, dup := s.verifications[newID]; dup {
		return otp.SendStart{}, fmt.Errorf("inmem: begin send: verification %s exists", newID)
	}
	if v != nil { // pending but past its expiry
		s.expire(v, p.Now)
	}
	v = &otp.Verification{
		ID: newID, AppID: p.AppID, Address: p.Phone, Channel: p.Channel, Locale: p.Locale, Status: otp.StatusPending,
		CodeHashes: [][]byte{slices.Clone(p.CodeHash(newID))}, Sends: 1, MaxAttempts: p.MaxAttempts,
		ClientIP: p.ClientIP, CreatedAt: now, ExpiresAt: ts(p.Now.Add(p.TTL)), Transaction: p.Transaction,
	}
	s.verifications[newID] = v
	s.byPhone[pk] = append(s.byPhone[pk], newID)
	s.pending[pk] = newID
	s.addSend(sendID, newID, p, now)
	d := verificationData(v)
	d.SendID = sendID
	s.emitVerification(events.VerificationCreated, v, v.ID, d, p.Now)
	return otp.SendStart{Verification: clone(v), Created: true}, nil
}

func (s *Store) addSend(id, verificationID string, p otp.BeginSend, now time.Time) {
	s.sends[id] = &history.SendRow{
		ID: id, AppID: p.AppID, VerificationID: verificationID, Time: now, Phone: p.Phone, ClientIP: p.ClientIP,
		Channel: channelOr(p.Channel), Country: p.Country, Encoding: p.Encoding, Segments: p.Segments,
		SendStatus: otp.SendSending, Provider: p.Provider, Shadow: p.Shadow, Fraud: copyExplanation(p.Fraud), Test: p.Test, Cost: p.Cost, Currency: p.Currency,
		Updated: now,
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
	if p.Provider != "" {
		r.Provider = p.Provider
	}
	r.Attempts = cloneAttempts(p.Attempts)
	v := s.verifications[r.VerificationID]
	if !p.Undo && p.Status == otp.SendSent {
		d := verificationData(v)
		d.SendID, d.Provider = id, r.Provider
		s.emitVerification(events.VerificationSent, v, id, d, p.Now)
	}
	if !p.Undo || v.Status != otp.StatusPending {
		return nil
	}
	canceled := p.Created && v.Sends <= 1
	if canceled {
		v.Status, v.ClosedAt = otp.StatusCanceled, ts(p.Now)
		delete(s.pending, phoneKey(v.AppID, v.Address))
	}
	v.Sends = max(v.Sends-1, 0)
	if canceled {
		// Its only message could not be sent: the verification failed, for its app.
		d := verificationData(v)
		d.Reason = "not_delivered"
		s.emitVerification(events.VerificationFailed, v, v.ID, d, p.Now)
	}
	return nil
}

// channelOr is the channel a send is stored with: sms when none is named, as the
// database's default says.
func channelOr(ch string) string {
	if ch == "" {
		return otp.ChannelSMS
	}
	return ch
}

// cloneAttempts copies attempts with their times as the store keeps them.
func cloneAttempts(in []otp.ProviderAttempt) []otp.ProviderAttempt {
	out := make([]otp.ProviderAttempt, len(in))
	for i, a := range in {
		a.Start = ts(a.Start)
		out[i] = a
	}
	return out
}
