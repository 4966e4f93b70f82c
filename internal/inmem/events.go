package inmem

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/otp"
)

var _ events.Store = (*Store)(nil)

// eventState holds webhook endpoints and the outbox; the store's mutex guards it, so an
// event row is written under the same lock as the change it reports.
type eventState struct {
	endpoints []events.Endpoint
	outbox    []*outboxRow
	seq       int64
	// blocksEnded marks the fraud blocks whose end was reported.
	blocksEnded map[string]bool
	// written holds each event id and endpoint id written, as the unique key of postgres.
	written map[[2]string]bool
}

// outboxRow is one event to one endpoint, as postgres keeps it in event_outbox.
type outboxRow struct {
	id          int64
	event       events.Event
	endpointID  string
	subject     string
	status      string
	attempts    int
	next        time.Time
	last        time.Time
	lastStatus  int
	lastError   string
	delivered   time.Time
	redelivered time.Time
}

// emit writes event typ about key (subject of its order, "" for none) to every endpoint of
// appID subscribed to it, or of every app when appID is ""; the caller holds the lock.
func (s *Store) emit(appID, typ, key, subject string, data any, at time.Time) {
	var raw json.RawMessage
	id := events.EventID(typ, key)
	for _, e := range s.ev.endpoints {
		if (appID != "" && e.AppID != otp.StoredAppID(appID)) || !slices.Contains(e.Types, typ) {
			continue
		}
		if s.ev.written[[2]string{id, e.ID}] {
			continue
		}
		if s.ev.written == nil {
			s.ev.written = map[[2]string]bool{}
		}
		s.ev.written[[2]string{id, e.ID}] = true
		if raw == nil {
			raw, _ = json.Marshal(data) // plain structs of strings and ints
		}
		s.ev.seq++
		s.ev.outbox = append(s.ev.outbox, &outboxRow{
			id: s.ev.seq, event: events.Event{ID: id, Type: typ, CreatedAt: ts(at), Data: raw},
			endpointID: e.ID, subject: subject, status: events.Pending, next: ts(at),
		})
	}
}

// verificationData is the payload of a verification event about v.
func verificationData(v *otp.Verification) events.VerificationData {
	return events.VerificationData{
		VerificationID: v.ID, AppID: otp.StoredAppID(v.AppID), Channel: v.Channel, To: v.Phone, Status: string(v.Status),
		Sends: v.Sends, Attempts: v.Attempts, ExpiresAt: events.Time(v.ExpiresAt),
	}
}

// emitVerification writes the event typ of v; the caller holds the lock.
func (s *Store) emitVerification(typ string, v *otp.Verification, key string, d events.VerificationData, at time.Time) {
	s.emit(v.AppID, typ, key, v.ID, d, at)
}

// CreateEndpoint implements events.Store.
func (s *Store) CreateEndpoint(ctx context.Context, e events.Endpoint, a otp.AdminAction) error {
	if err := alive("create endpoint", ctx); err != nil {
		return err
	}
	id, ok := canonID(e.ID)
	if !ok {
		return fmt.Errorf("inmem: create endpoint: invalid use of the store: id must be a uuid")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e.ID, e.AppID, e.CreatedAt = id, otp.StoredAppID(e.AppID), ts(e.CreatedAt)
	e.Types, e.SecretSealed = slices.Clone(e.Types), slices.Clone(e.SecretSealed)
	s.ev.endpoints = append(s.ev.endpoints, e)
	s.audit(a)
	return nil
}

// Endpoints implements events.Store.
func (s *Store) Endpoints(ctx context.Context, appID string) ([]events.Endpoint, error) {
	if err := alive("endpoints", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []events.Endpoint{}
	for _, e := range s.ev.endpoints {
		if e.AppID == otp.StoredAppID(appID) {
			out = append(out, e)
		}
	}
	return out, nil
}

// endpoint finds an endpoint of an app; the caller holds the lock.
func (s *Store) endpoint(appID, id string) (int, bool) {
	id, _ = canonID(id)
	i := slices.IndexFunc(s.ev.endpoints, func(e events.Endpoint) bool { return e.ID == id && e.AppID == otp.StoredAppID(appID) })
	return i, i >= 0
}

// Endpoint implements events.Store.
func (s *Store) Endpoint(ctx context.Context, appID, id string) (events.Endpoint, error) {
	if err := alive("endpoint", ctx); err != nil {
		return events.Endpoint{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.endpoint(appID, id)
	if !ok {
		return events.Endpoint{}, fmt.Errorf("inmem: endpoint: %w", otp.ErrNotFound)
	}
	return s.ev.endpoints[i], nil
}

// DeleteEndpoint implements events.Store.
func (s *Store) DeleteEndpoint(ctx context.Context, appID, id string, a otp.AdminAction) error {
	if err := alive("delete endpoint", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.endpoint(appID, id)
	if !ok {
		return fmt.Errorf("inmem: delete endpoint: %w", otp.ErrNotFound)
	}
	gone := s.ev.endpoints[i].ID
	s.ev.endpoints = slices.Delete(s.ev.endpoints, i, i+1)
	s.ev.outbox = slices.DeleteFunc(s.ev.outbox, func(r *outboxRow) bool { return r.endpointID == gone })
	s.audit(a)
	return nil
}

// ClaimEvents implements events.Store.
func (s *Store) ClaimEvents(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]events.Claim, error) {
	if err := alive("claim events", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Only the first pending event (by rank, then id) of an endpoint and subject may go.
	head := map[[2]string]*outboxRow{}
	for _, r := range s.ev.outbox { // in id order
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
	for _, r := range s.ev.outbox {
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
		e := s.ev.endpoints[i]
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
	i := slices.IndexFunc(s.ev.endpoints, func(e events.Endpoint) bool { return e.ID == id })
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
		i := slices.IndexFunc(s.ev.outbox, func(r *outboxRow) bool { return r.id == res.DeliveryID })
		if i < 0 {
			continue
		}
		r := s.ev.outbox[i]
		if r.status != events.Pending || (r.attempts != res.Attempt && res.Outcome != events.Delivered) {
			continue
		}
		r.status, r.last, r.lastStatus, r.lastError = res.Outcome, ts(res.At), res.HTTPStatus, res.Error
		switch res.Outcome {
		case events.Delivered:
			r.delivered = ts(res.At)
		case events.Pending:
			r.next = ts(res.Next)
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
	for _, r := range s.ev.outbox {
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
	id := s.ev.endpoints[i].ID
	out := []events.Delivery{}
	for j := len(s.ev.outbox) - 1; j >= 0 && len(out) < limit; j-- {
		r := s.ev.outbox[j]
		if r.endpointID == id && (f.Status == "" || r.status == f.Status) {
			out = append(out, r.delivery())
		}
	}
	return out, nil
}

// Redeliver implements events.Store.
func (s *Store) Redeliver(ctx context.Context, appID, endpointID, eventID string, now time.Time, a otp.AdminAction) (events.Delivery, error) {
	if err := alive("redeliver", ctx); err != nil {
		return events.Delivery{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.endpoint(appID, endpointID)
	eventID, _ = canonID(eventID)
	var r *outboxRow
	if ok {
		id := s.ev.endpoints[i].ID
		if j := slices.IndexFunc(s.ev.outbox, func(r *outboxRow) bool { return r.endpointID == id && r.event.ID == eventID }); j >= 0 {
			r = s.ev.outbox[j]
		}
	}
	if r == nil {
		return events.Delivery{}, fmt.Errorf("inmem: redeliver: %w", otp.ErrNotFound)
	}
	if r.status != events.Pending {
		r.status, r.delivered, r.attempts, r.next, r.redelivered = events.Pending, time.Time{}, 0, ts(now), ts(now)
	}
	s.audit(a)
	return r.delivery(), nil
}

// ExpireVerifications implements events.Store.
func (s *Store) ExpireVerifications(ctx context.Context, now time.Time, limit int) (int, error) {
	if err := alive("expire verifications", ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, k := range slices.Sorted(maps.Keys(s.pending)) {
		if n >= limit {
			break
		}
		v := s.verifications[s.pending[k]]
		if v.ExpiresAt.After(now) {
			continue
		}
		s.expire(v, now)
		n++
	}
	return n, nil
}

// expire closes the pending v as expired and reports it; the caller holds the lock.
func (s *Store) expire(v *otp.Verification, now time.Time) {
	v.Status, v.ClosedAt = otp.StatusExpired, ts(now)
	delete(s.pending, phoneKey(v.AppID, v.Phone))
	s.emitVerification(events.VerificationExpired, v, v.ID, verificationData(v), now)
}

// EndFraudBlocks implements events.Store.
func (s *Store) EndFraudBlocks(ctx context.Context, now time.Time, limit int) (int, error) {
	if err := alive("end fraud blocks", ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := range s.fraud.blocks {
		b := &s.fraud.blocks[i]
		if n >= limit || s.ev.blocksEnded[b.ID] || !b.LiftedAt.IsZero() || b.EndsAt.After(now) {
			continue
		}
		s.endBlock(b, b.EndsAt, now)
		n++
	}
	return n, nil
}

// blockData is the payload of a fraud block event about b.
func blockData(b *fraud.Block) events.FraudBlockData {
	return events.FraudBlockData{
		BlockID: b.ID, Scope: b.Scope, Target: b.Target, Mode: string(b.Mode), Reason: b.Reason,
		StartedAt: events.Time(b.StartedAt), EndsAt: events.Time(b.EndsAt),
	}
}

// endBlock reports that b ended at end; the caller holds the lock.
func (s *Store) endBlock(b *fraud.Block, end, now time.Time) {
	if s.ev.blocksEnded == nil {
		s.ev.blocksEnded = map[string]bool{}
	}
	s.ev.blocksEnded[b.ID] = true
	d := blockData(b)
	d.EndedAt, d.LiftedBy = events.Time(end), b.LiftedBy
	s.emit("", events.FraudBlockEnded, b.ID, b.ID, d, now)
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
