package inmem

import (
	"github.com/google/uuid"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// RecordDenied implements otp.DeniedRecorder, writing at once: in memory a write
// costs nothing, so there is nothing to batch. Rows that postgres.BatchWriter would
// refuse (a status other than blocked or duplicate, a taken id) are dropped and counted.
func (s *Store) RecordDenied(d otp.DeniedSend) {
	if d.Status != otp.SendBlocked && d.Status != otp.SendDuplicate {
		s.dropped.Add(1)
		return
	}
	id, ok := canonID(d.ID)
	if !ok {
		id = uuid.Must(uuid.NewV7()).String()
	}
	if d.Time.IsZero() {
		d.Time = s.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.sends[id]; taken {
		s.dropped.Add(1)
		return
	}
	t := ts(d.Time)
	s.sends[id] = &history.SendRow{
		ID: id, AppID: otp.StoredAppID(d.AppID), Time: t, Phone: d.Phone, Channel: channelOr(d.Channel), ClientIP: d.ClientIP, SendStatus: d.Status, Reason: d.Reason,
		Shadow: d.Shadow, Fraud: copyExplanation(d.Fraud), Updated: t,
	}
	if d.Status == otp.SendBlocked {
		r := s.sends[id]
		s.emit(r.AppID, events.SendBlocked, id, "", events.BlockedData{
			SendID: id, AppID: r.AppID, Channel: r.Channel, To: r.Phone, Reason: r.Reason, Fraud: events.NewFraudData(r.Fraud),
		}, t)
	}
	s.written.Add(1)
}

// Dropped counts refused sends that were not kept.
func (s *Store) Dropped() uint64 { return s.dropped.Load() }

// Written counts refused sends kept.
func (s *Store) Written() uint64 { return s.written.Load() }

// QueueDepth is always zero: nothing waits.
func (s *Store) QueueDepth() int { return 0 }
