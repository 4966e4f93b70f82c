package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// The statements below write event rows beside the changes they report, one row per
// endpoint subscribed to the type; they write nothing when no endpoint is. Event rows of
// one verification are numbered (event_outbox.id) while its row is locked, so their order
// is the order in which their changes were committed.

// verificationData builds the payload of a verification event from a row named v; its
// "to" is the sealed address, which ClaimEvents and Deliveries open.
const verificationData = `jsonb_build_object('verification_id', v.id, 'app_id', v.app_id, 'channel', v.channel,
	'to', coalesce(nullif(v.phone_sealed, ''), v.phone), 'status', v.status, 'sends', v.sends, 'attempts', v.attempts, 'expires_at', otpgate_ts(v.expires_at))`

// emitVerificationTx writes the event typ of verification id in tx, with extra merged into
// its payload; the verification must be locked by tx already.
func emitVerificationTx(ctx context.Context, tx pgx.Tx, typ, id string, extra map[string]string, at time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
		SELECT otpgate_event_id($1, v.id), w.id, $1, v.id, `+verificationData+` || $3::jsonb, $4, $4
		FROM verifications v JOIN webhook_endpoints w ON w.app_id = v.app_id AND $1 = ANY(w.event_types)
		WHERE v.id = $2
		ON CONFLICT DO NOTHING`, typ, id, extraJSON(extra), at)
	return err
}

// extraJSON is the jsonb text of extra fields of a payload.
func extraJSON(extra map[string]string) map[string]string {
	if extra == nil {
		return map[string]string{}
	}
	return extra
}

// ExpireVerifications implements events.Store in one statement. It walks the pending
// verifications through their unique index (ordered by it, so the planner keeps to it),
// which holds only the pending ones.
func (s *Store) ExpireVerifications(ctx context.Context, now time.Time, limit int) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `WITH x AS (
			SELECT id FROM verifications WHERE status = 'pending' AND expires_at <= $1
			ORDER BY app_id, phone LIMIT $2 FOR UPDATE SKIP LOCKED
		), v AS (
			UPDATE verifications t SET status = 'expired', closed_at = $1 FROM x
			WHERE t.id = x.id AND t.status = 'pending'
			RETURNING t.id, t.app_id, t.channel, t.phone, t.phone_sealed, t.status, t.sends, t.attempts, t.expires_at
		), e AS (
			INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
			SELECT otpgate_event_id('verification.expired', v.id), w.id, 'verification.expired', v.id, `+verificationData+`, $1, $1
			FROM v JOIN webhook_endpoints w ON w.app_id = v.app_id AND 'verification.expired' = ANY(w.event_types)
			ORDER BY v.id
			ON CONFLICT DO NOTHING
		)
		SELECT count(*) FROM v`, now, limit).Scan(&n)
	return n, wrap("expire verifications", err)
}

// blockData builds the payload of a fraud block event from a row named b.
const blockData = `jsonb_build_object('block_id', b.id, 'scope', b.scope, 'target', b.target, 'mode', b.mode,
	'reason', b.reason, 'started_at', otpgate_ts(b.started_at), 'ends_at', otpgate_ts(b.ends_at))`

// EndFraudBlocks implements events.Store in one statement.
func (s *Store) EndFraudBlocks(ctx context.Context, now time.Time, limit int) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `WITH x AS (
			SELECT id FROM fraud_blocks WHERE end_reported_at IS NULL AND ends_at <= $1
			ORDER BY ends_at LIMIT $2 FOR UPDATE SKIP LOCKED
		), b AS (
			UPDATE fraud_blocks f SET end_reported_at = $1 FROM x WHERE f.id = x.id AND f.end_reported_at IS NULL
			RETURNING f.id, f.scope, f.target, f.mode, f.reason, f.started_at, f.ends_at
		), e AS (
			INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
			SELECT otpgate_event_id('fraud.block_ended', b.id), w.id, 'fraud.block_ended', b.id,
				`+blockData+` || jsonb_build_object('ended_at', otpgate_ts(b.ends_at)), $1, $1
			FROM b JOIN webhook_endpoints w ON 'fraud.block_ended' = ANY(w.event_types)
			ORDER BY b.ends_at, b.id
			ON CONFLICT DO NOTHING
		)
		SELECT count(*) FROM b`, now, limit).Scan(&n)
	return n, wrap("end fraud blocks", err)
}

// emitBlockTx writes the event typ of fraud block id in tx, to every subscribed endpoint
// of every app, with extra merged into its payload.
func emitBlockTx(ctx context.Context, tx pgx.Tx, typ, id string, extra map[string]string, at time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
		SELECT otpgate_event_id($1, b.id), w.id, $1, b.id, `+blockData+` || $3::jsonb, $4, $4
		FROM fraud_blocks b JOIN webhook_endpoints w ON $1 = ANY(w.event_types)
		WHERE b.id = $2
		ON CONFLICT DO NOTHING`, typ, id, extraJSON(extra), at)
	return err
}
