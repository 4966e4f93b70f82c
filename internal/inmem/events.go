package inmem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
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

func (e *eventState) init() { e.blocksEnded, e.written = map[string]bool{}, map[[2]string]bool{} }

// eventTables is the store's webhook endpoints and the outbox; call with s.mu held.
func (s *Store) eventTables() *eventState { return part[eventState](s) }

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
	tables := s.eventTables()
	for _, e := range tables.endpoints {
		if (appID != "" && e.AppID != otp.StoredAppID(appID)) || !slices.Contains(e.Types, typ) {
			continue
		}
		if tables.written[[2]string{id, e.ID}] {
			continue
		}
		tables.written[[2]string{id, e.ID}] = true
		if raw == nil {
			raw, _ = json.Marshal(data) // plain structs of strings and ints
		}
		tables.seq++
		tables.outbox = append(tables.outbox, &outboxRow{
			id: tables.seq, event: events.Event{ID: id, Type: typ, CreatedAt: ts(at), Data: raw},
			endpointID: e.ID, subject: subject, status: events.Pending, next: ts(at),
		})
	}
}

// verificationData is the payload of a verification event about v.
func verificationData(v *otp.Verification) events.VerificationData {
	return events.VerificationData{
		VerificationID: v.ID, AppID: otp.StoredAppID(v.AppID), Channel: v.Channel, To: v.Address, Status: string(v.Status),
		Sends: v.Sends, Attempts: v.Attempts, ExpiresAt: events.Time(v.ExpiresAt),
	}
}

// emitVerification writes the event typ of v; the caller holds the lock.
func (s *Store) emitVerification(typ string, v *otp.Verification, key string, d events.VerificationData, at time.Time) {
	s.emit(v.AppID, typ, key, v.ID, d, at)
}

// CreateEndpoint implements events.Store.
func (s *Store) CreateEndpoint(ctx context.Context, e events.Endpoint, a history.AdminAction) error {
	if err := alive("create endpoint", ctx); err != nil {
		return err
	}
	id, ok := canonID(e.ID)
	if !ok {
		return fmt.Errorf("inmem: create endpoint: invalid use of the store: id must be a uuid")
	}
	if err := errors.Join(otp.CheckTextIn("endpoint", e), a.Validate()); err != nil {
		return fmt.Errorf("inmem: create endpoint: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e.ID, e.AppID, e.CreatedAt = id, otp.StoredAppID(e.AppID), ts(e.CreatedAt)
	e.Types, e.SecretSealed = slices.Clone(e.Types), slices.Clone(e.SecretSealed)
	tables := s.eventTables()
	tables.endpoints = append(tables.endpoints, e)
	s.audit(ctx, a)
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
	for _, e := range s.eventTables().endpoints {
		if e.AppID == otp.StoredAppID(appID) {
			out = append(out, e)
		}
	}
	return out, nil
}

// endpoint finds an endpoint of an app; the caller holds the lock.
func (s *Store) endpoint(appID, id string) (int, bool) {
	id, _ = canonID(id)
	i := slices.IndexFunc(s.eventTables().endpoints, func(e events.Endpoint) bool { return e.ID == id && e.AppID == otp.StoredAppID(appID) })
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
	return s.eventTables().endpoints[i], nil
}

// DeleteEndpoint implements events.Store.
func (s *Store) DeleteEndpoint(ctx context.Context, appID, id string, a history.AdminAction) error {
	if err := alive("delete endpoint", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.endpoint(appID, id)
	if !ok {
		return fmt.Errorf("inmem: delete endpoint: %w", otp.ErrNotFound)
	}
	gone := s.eventTables().endpoints[i].ID
	s.dropEndpoints(func(e events.Endpoint) bool { return e.ID == gone })
	s.audit(ctx, a)
	return nil
}

// dropEndpoints deletes the endpoints that match and their deliveries; s.mu is held.
func (s *Store) dropEndpoints(match func(events.Endpoint) bool) {
	gone := map[string]bool{}
	tables := s.eventTables()
	tables.endpoints = slices.DeleteFunc(tables.endpoints, func(e events.Endpoint) bool {
		if match(e) {
			gone[e.ID] = true
		}
		return gone[e.ID]
	})
	tables.outbox = slices.DeleteFunc(tables.outbox, func(r *outboxRow) bool { return gone[r.endpointID] })
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
	delete(s.pending, phoneKey(v.AppID, v.Address))
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
	fraudT := s.fraudTables()
	for i := range fraudT.blocks {
		b := &fraudT.blocks[i]
		if n >= limit || s.eventTables().blocksEnded[b.ID] || !b.LiftedAt.IsZero() || b.EndsAt.After(now) {
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
	s.eventTables().blocksEnded[b.ID] = true
	d := blockData(b)
	d.EndedAt, d.LiftedBy = events.Time(end), b.LiftedBy
	s.emit("", events.FraudBlockEnded, b.ID, b.ID, d, now)
}
