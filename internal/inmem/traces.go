package inmem

import (
	"context"
	"fmt"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// traceState holds the traceparents of traced sends and verifications, by id.
type traceState struct{ byID map[string]string }

func (t *traceState) init() { t.byID = map[string]string{} }

// traceTables is the store's traceparents; call with s.mu held.
func (s *Store) traceTables() *traceState { return part[traceState](s) }

// SetSendTrace implements tracing.TraceStore: the send's traceparent, and its
// verification's when it has none yet.
func (s *Store) SetSendTrace(ctx context.Context, sendID, traceparent string) error {
	if err := alive("set send trace", ctx); err != nil {
		return err
	}
	id, ok := canonID(sendID)
	s.mu.Lock()
	defer s.mu.Unlock()
	row := s.sends[id]
	if !ok || row == nil {
		return fmt.Errorf("inmem: set send trace: %w", otp.ErrNotFound)
	}
	tables := s.traceTables()
	tables.byID[id] = traceparent
	if _, ok := tables.byID[row.VerificationID]; !ok && row.VerificationID != "" {
		tables.byID[row.VerificationID] = traceparent
	}
	return nil
}

// VerificationTrace implements tracing.TraceStore.
func (s *Store) VerificationTrace(ctx context.Context, id string) (string, error) {
	if err := alive("verification trace", ctx); err != nil {
		return "", err
	}
	id, _ = canonID(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.traceTables().byID[id], nil
}

// ReceiptTrace implements tracing.TraceStore: the traceparent of the send a receipt names.
func (s *Store) ReceiptTrace(ctx context.Context, r receipt.Receipt) (string, error) {
	if err := alive("receipt trace", ctx); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, row := range s.matching(r) {
		if tp := s.traceTables().byID[row.ID]; row.Provider == r.Provider && tp != "" {
			return tp, nil
		}
	}
	return "", nil
}
