package inmem

import (
	"context"
	"fmt"
	"slices"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// ClaimEvents implements events.Store.
func (s *Store) ClaimEvents(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]events.Claim, error) {
	if err := alive("claim events", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Only the first pending event (by rank, then id) of an endpoint and subject may go.
	head := map[[2]string]*outboxRow{}
	tables := s.eventTables()
	for _, r := range tables.outbox { // in id order
		k := [2]string{r.endpointID, r.subject}
		if r.status != events.Pending || r.subject == "" {
			continue
		}
		if h := head[k]; h == nil || rank(r.event.Type) < rank(h.event.Type) {
			head[k] = r
		}
	}
	sending := map[string]bool{}
	for _, r := range s.sends {
		if r.SendStatus == otp.SendSending {
			sending[r.VerificationID] = true
		}
	}
	var due []*outboxRow
	for _, r := range tables.outbox {
		switch {
		case r.status != events.Pending || r.next.After(now):
		case r.subject != "" && head[[2]string{r.endpointID, r.subject}] != r:
		case closing(r.event.Type) && sending[r.subject]:
		default:
			due = append(due, r)
		}
	}
	slices.SortStableFunc(due, func(a, b *outboxRow) int { return a.next.Compare(b.next) })
	if len(due) > limit {
		due = due[:max(limit, 0)]
	}
	out := make([]events.Claim, 0, len(due))
	for _, r := range due {
		r.attempts++
		r.next, r.last = ts(now.Add(lease)), ts(now)
		i, _ := s.endpointByID(r.endpointID)
		e := tables.endpoints[i]
		window := r.event.CreatedAt
		if !r.redelivered.IsZero() {
			window = r.redelivered
		}
		out = append(out, events.Claim{
			DeliveryID: r.id, Attempt: r.attempts, Event: r.event, EndpointID: e.ID, URL: e.URL,
			SecretSealed: slices.Clone(e.SecretSealed), WindowStart: window,
		})
	}
	return out, nil
}

// endpointByID finds an endpoint of any app; the caller holds the lock.
func (s *Store) endpointByID(id string) (int, bool) {
	i := slices.IndexFunc(s.eventTables().endpoints, func(e events.Endpoint) bool { return e.ID == id })
	return i, i >= 0
}

// SettleEvents implements events.Store.
func (s *Store) SettleEvents(ctx context.Context, results []events.Result) error {
	if err := alive("settle events", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, res := range results {
		tables := s.eventTables()
		i := slices.IndexFunc(tables.outbox, func(r *outboxRow) bool { return r.id == res.DeliveryID })
		if i < 0 {
			continue
		}
		r := tables.outbox[i]
		if r.status != events.Pending || (r.attempts != res.Attempt && res.Outcome != events.Delivered) {
			continue
		}
		r.status, r.last, r.lastStatus, r.lastError = res.Outcome, ts(res.At), res.HTTPStatus, res.Error
		switch res.Outcome {
		case events.Delivered:
			r.delivered = ts(res.At)
		case events.Pending:
			r.next = ts(res.Next)
			// What waits behind it waits as long, as in postgres.
			for _, l := range tables.outbox {
				if l != r && r.subject != "" && l.status == events.Pending && l.endpointID == r.endpointID &&
					l.subject == r.subject && l.next.Before(r.next) {
					l.next = r.next
				}
			}
		}
	}
	return nil
}

// OldestPending implements events.Store.
func (s *Store) OldestPending(ctx context.Context) (time.Time, bool, error) {
	if err := alive("oldest pending event", ctx); err != nil {
		return time.Time{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest time.Time
	for _, r := range s.eventTables().outbox {
		if r.status == events.Pending && (oldest.IsZero() || r.event.CreatedAt.Before(oldest)) {
			oldest = r.event.CreatedAt
		}
	}
	return oldest, !oldest.IsZero(), nil
}

func (r *outboxRow) delivery() events.Delivery {
	return events.Delivery{
		Event: r.event, EndpointID: r.endpointID, Status: r.status, Attempts: r.attempts, NextAttemptAt: r.next,
		LastAttemptAt: r.last, LastStatus: r.lastStatus, LastError: r.lastError, DeliveredAt: r.delivered,
	}
}

// Deliveries implements events.Store.
func (s *Store) Deliveries(ctx context.Context, appID, endpointID string, f events.DeliveryFilter) ([]events.Delivery, error) {
	if err := alive("deliveries", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.endpoint(appID, endpointID)
	if !ok {
		return nil, fmt.Errorf("inmem: deliveries: %w", otp.ErrNotFound)
	}
	limit := f.Limit
	if limit <= 0 || limit > events.MaxDeliveries {
		limit = events.DefaultDeliveries
	}
	tables := s.eventTables()
	id := tables.endpoints[i].ID
	out := []events.Delivery{}
	for j := len(tables.outbox) - 1; j >= 0 && len(out) < limit; j-- {
		r := tables.outbox[j]
		if r.endpointID == id && (f.Status == "" || r.status == f.Status) {
			out = append(out, r.delivery())
		}
	}
	return out, nil
}

// Redeliver implements events.Store.
func (s *Store) Redeliver(ctx context.Context, appID, endpointID, eventID string, now time.Time, a history.AdminAction) (events.Delivery, error) {
	if err := alive("redeliver", ctx); err != nil {
		return events.Delivery{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.endpoint(appID, endpointID)
	eventID, _ = canonID(eventID)
	var r *outboxRow
	if ok {
		tables := s.eventTables()
		id := tables.endpoints[i].ID
		if j := slices.IndexFunc(tables.outbox, func(r *outboxRow) bool { return r.endpointID == id && r.event.ID == eventID }); j >= 0 {
			r = tables.outbox[j]
		}
	}
	if r == nil {
		return events.Delivery{}, fmt.Errorf("inmem: redeliver: %w", otp.ErrNotFound)
	}
	was, wasAttempts := r.status, r.attempts
	if r.status != events.Pending {
		r.status, r.delivered, r.attempts, r.next, r.redelivered = events.Pending, time.Time{}, 0, ts(now), ts(now)
	}
	d := r.delivery()
	s.audit(ctx, events.AuditRedeliver(a, was, wasAttempts, d))
	return d, nil
}

// rank is an event's place among its subject's, as postgres's event_outbox.rank.
func rank(typ string) int {
	switch typ {
	case events.VerificationCreated, events.FraudBlockStarted:
		return 0
	case events.VerificationSent:
		return 1
	}
	return 2
}

// closing reports whether typ closes a verification: it waits for the outcomes of its sends.
func closing(typ string) bool {
	return typ == events.VerificationApproved || typ == events.VerificationExpired || typ == events.VerificationFailed
}
