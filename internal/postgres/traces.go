package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// SetSendTrace implements tracing.TraceStore in one statement: the send's traceparent, and
// its verification's when it has none yet (the send that began it).
func (s *Store) SetSendTrace(ctx context.Context, sendID, traceparent string) error {
	if !validID(sendID) {
		return fmt.Errorf("postgres: set send trace: %w", otp.ErrNotFound)
	}
	var n int
	err := s.pool.QueryRow(ctx, `WITH s AS (UPDATE sends SET traceparent = $2 WHERE id = $1 RETURNING verification_id),
		v AS (UPDATE verifications v SET traceparent = $2 FROM s WHERE v.id = s.verification_id AND v.traceparent IS NULL)
		SELECT count(*) FROM s`, sendID, traceparent).Scan(&n)
	if err == nil && n == 0 {
		err = otp.ErrNotFound
	}
	return wrap("set send trace", err)
}

// VerificationTrace implements tracing.TraceStore.
func (s *Store) VerificationTrace(ctx context.Context, id string) (string, error) {
	if !validID(id) {
		return "", nil
	}
	var tp *string
	err := s.pool.QueryRow(ctx, `SELECT traceparent FROM verifications WHERE id = $1`, id).Scan(&tp)
	return deref(tp), wrap("verification trace", noRowsIsNone(err))
}

// ReceiptTrace implements tracing.TraceStore: the traceparent of the send a receipt names,
// found as MarkDelivery finds it.
func (s *Store) ReceiptTrace(ctx context.Context, r receipt.Receipt) (string, error) {
	q, key := `SELECT traceparent FROM sends WHERE provider = $1 AND provider_message_id = $2 AND traceparent IS NOT NULL LIMIT 1`, r.ProviderID
	switch {
	case r.ProviderID != "":
	case validID(r.SendID):
		q, key = `SELECT traceparent FROM sends WHERE provider = $1 AND id = $2::uuid`, r.SendID
	default:
		return "", nil
	}
	var tp *string
	err := s.pool.QueryRow(ctx, q, r.Provider, key).Scan(&tp)
	return deref(tp), wrap("receipt trace", noRowsIsNone(err))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// noRowsIsNone reads a row that is not there as no trace context.
func noRowsIsNone(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}
