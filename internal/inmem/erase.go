package inmem

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// EraseAddress implements history.EraseStore, as internal/postgres does.
func (s *Store) EraseAddress(ctx context.Context, address, redacted string, audit history.AdminAction) (history.Erased, error) {
	var out history.Erased
	if err := alive("erase address", ctx); err != nil {
		return out, err
	}
	if err := otp.CheckTextIn("erasure", struct{ Address, Redacted string }{address, redacted}); err != nil {
		return out, fmt.Errorf("inmem: erase address: %w", err)
	}
	if err := audit.Validate(); err != nil {
		return out, fmt.Errorf("inmem: erase address: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := map[string]bool{}
	for id, v := range s.verifications {
		if v.Address != address {
			continue
		}
		ids[id] = true
		pk := phoneKey(v.AppID, v.Address)
		delete(s.byPhone, pk)
		if s.pending[pk] == id {
			delete(s.pending, pk)
		}
		delete(s.verifications, id)
		out.Verifications++
	}
	for id, r := range s.sends {
		if ids[r.VerificationID] || r.Phone == address {
			delete(s.sends, id)
			out.Sends++
		}
	}
	n := len(s.attempts)
	s.attempts = slices.DeleteFunc(s.attempts, func(a history.Attempt) bool { return ids[a.VerificationID] })
	out.Attempts = n - len(s.attempts)
	tables := s.eventTables()
	n = len(tables.outbox)
	tables.outbox = slices.DeleteFunc(tables.outbox, func(r *outboxRow) bool {
		return ids[r.subject] || r.subject == "" && payloadTo(r.event.Data) == address
	})
	out.Events = n - len(tables.outbox)
	for i, a := range s.admin {
		if a.Target == "phone:"+address || a.Target == "email:"+address {
			s.admin[i].Target = redacted
			out.AuditEntries++
		}
	}
	var details int
	out.FraudBlocks, details = s.redactFraud(address, redacted)
	out.AuditEntries += details
	s.audit(ctx, audit)
	return out, nil
}

// redactFraud rewrites the blocks whose reason names address as the send that tripped
// them, their events and their audit entries, to name the mask of redacted ("phone:<mask>");
// it returns how many blocks and audit entries it rewrote. The caller holds the lock.
func (s *Store) redactFraud(address, redacted string) (blocks, audited int) {
	_, mask, _ := strings.Cut(redacted, ":")
	was, now := fraud.TrippedBy(address), fraud.TrippedBy(mask)
	ids := map[string]bool{}
	fraudT := s.fraudTables()
	for i, b := range fraudT.blocks {
		if strings.Contains(b.Reason, was) {
			fraudT.blocks[i].Reason = strings.ReplaceAll(b.Reason, was, now)
			ids[b.ID] = true
		}
	}
	for _, r := range s.eventTables().outbox {
		if !ids[r.subject] {
			continue
		}
		var d events.FraudBlockData
		if json.Unmarshal(r.event.Data, &d) == nil && strings.Contains(d.Reason, was) {
			d.Reason = strings.ReplaceAll(d.Reason, was, now)
			if data, err := json.Marshal(d); err == nil {
				r.event.Data = data
			}
		}
	}
	for i, a := range s.admin {
		if a.Action == fraud.ActionBlockStarted && strings.Contains(a.Detail, was) {
			s.admin[i].Detail = strings.ReplaceAll(a.Detail, was, now)
			audited++
		}
	}
	return len(ids), audited
}

// payloadTo is the address an event's payload names ("to"), as a refused send's event
// does without a subject.
func payloadTo(data json.RawMessage) string {
	var p struct {
		To string `json:"to"`
	}
	_ = json.Unmarshal(data, &p) // a payload without "to" names nobody
	return p.To
}

var _ history.EraseStore = (*Store)(nil)
