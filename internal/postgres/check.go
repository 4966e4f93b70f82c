package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/events"
	"otpgate/internal/otp"
)

// Verification implements otp.Store.
func (s *Store) Verification(ctx context.Context, id string) (otp.Verification, error) {
	if !validID(id) {
		return otp.Verification{}, fmt.Errorf("postgres: verification: %w", otp.ErrNotFound)
	}
	v, err := s.scanVerification(s.pool.QueryRow(ctx, `SELECT `+verificationCols+` FROM verifications WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		err = otp.ErrNotFound
	}
	return v, wrap("verification", err)
}

// Newest implements otp.Store with the statement a check by phone reads with.
func (s *Store) Newest(ctx context.Context, appID, address string) (otp.Verification, error) {
	appID = otp.StoredAppID(appID)
	if !validID(appID) || address == "" {
		return otp.Verification{}, fmt.Errorf("postgres: newest: %w", otp.ErrNotFound)
	}
	v, err := s.scanVerification(s.pool.QueryRow(ctx, newestQuery, s.addressIndex(address), appID))
	if errors.Is(err, pgx.ErrNoRows) {
		err = otp.ErrNotFound
	}
	return v, wrap("newest", err)
}

// newestQuery reads the app's newest verification of a phone or email address: the pending
// one, which is the newest while it is pending, or else the one of the newest send to the
// address that has one (migrations/00140: no index over all verifications is keyed by the
// address; 00150 indexes the sends of verifications by address).
const newestQuery = `SELECT ` + verificationCols + ` FROM verifications WHERE id = coalesce(
			(SELECT id FROM verifications WHERE phone = $1 AND app_id = $2 AND status = 'pending'),
			(SELECT s.verification_id FROM sends s WHERE s.phone = $1 AND s.app_id = $2 AND s.verification_id IS NOT NULL
				ORDER BY s.created_at DESC, s.id DESC LIMIT 1))`

// Check implements otp.Store. It decides on the verification as read (ref.Seen, or an
// unlocked read) and saves the outcome and the attempt row in one statement, in autocommit,
// on condition that the verification is still in the state decide saw; when a concurrent
// check or resend changed it meanwhile, it decides again under the row's lock, in a
// transaction, so concurrent checks take turns, each on the counts the previous one saved.
func (s *Store) Check(ctx context.Context, ref otp.CheckRef, decide func(otp.Verification) (otp.Verification, otp.CheckOutcome)) (otp.Verification, otp.CheckOutcome, error) {
	var query, key string
	appID := otp.StoredAppID(ref.AppID)
	switch {
	case !validID(appID):
		return otp.Verification{}, "", fmt.Errorf("postgres: check: %w", otp.ErrNotFound)
	case ref.ID != "" && validID(ref.ID):
		query, key = `SELECT `+verificationCols+` FROM verifications WHERE id = $1 AND app_id = $2`, ref.ID
	case ref.ID == "" && ref.Phone != "":
		query, key = newestQuery, s.addressIndex(ref.Phone)
	default:
		return otp.Verification{}, "", fmt.Errorf("postgres: check: %w", otp.ErrNotFound)
	}
	seen := ref.Seen
	if !usableSeen(ref, seen, appID) {
		v, err := s.scanVerification(s.pool.QueryRow(ctx, query, key, appID))
		if errors.Is(err, pgx.ErrNoRows) {
			err = otp.ErrNotFound
		}
		if err != nil {
			return otp.Verification{}, "", wrap("check", err)
		}
		seen = &v
	}
	out, outcome, err := s.checkUnchanged(ctx, ref, *seen, decide)
	if err == nil || !errors.Is(err, errChanged) {
		return out, outcome, wrap("check", err)
	}

	err = s.inTx(ctx, "check", func(tx pgx.Tx) error {
		v, err := s.scanVerification(tx.QueryRow(ctx, query+` FOR UPDATE`, key, appID))
		if errors.Is(err, pgx.ErrNoRows) {
			return otp.ErrNotFound
		}
		if err != nil {
			return err
		}
		decided, oc := decide(v)
		closedAt := decided.SettledClosedAt(ref.Now)
		out, err = s.scanVerification(tx.QueryRow(ctx, `UPDATE verifications SET status = $2, attempts = $3, closed_at = $4
			WHERE id = $1 RETURNING `+verificationCols, v.ID, string(decided.Status), decided.Attempts, nullTime(closedAt)))
		if err != nil {
			return err
		}
		outcome = oc
		_, err = tx.Exec(ctx, `INSERT INTO attempts (verification_id, outcome, client_ip, created_at)
			VALUES ($1, $2, $3, $4)`, v.ID, string(oc), ref.ClientIP, ref.Now)
		if typ, extra := closingEvent(v.Status, decided.Status); err == nil && typ != "" {
			err = emitVerificationTx(ctx, tx, typ, v.ID, extra, ref.Now)
		}
		return err
	})
	if err != nil {
		return otp.Verification{}, "", err
	}
	return out, outcome, nil
}

// usableSeen reports whether the check may decide on seen, the caller's earlier read: it
// must be the verification the check names. For a check by phone, that is the phone's
// newest verification, which a pending one is as long as it is unchanged: a newer one can
// only be created after it closed, and checkUnchanged saves nothing once it has.
func usableSeen(ref otp.CheckRef, seen *otp.Verification, appID string) bool {
	switch {
	case seen == nil || otp.StoredAppID(seen.AppID) != appID:
		return false
	case ref.ID != "":
		return strings.EqualFold(seen.ID, ref.ID)
	}
	return seen.Status == otp.StatusPending && seen.Address == ref.Phone
}

// errChanged means the verification changed after it was read.
var errChanged = errors.New("verification changed since it was read")

// checkUnchanged decides on v and saves the outcome and the attempt in one statement,
// unless v changed since it was read: its status, attempts, expiry or codes, everything
// decide looks at. Errors: errChanged when it changed (nothing was saved).
func (s *Store) checkUnchanged(ctx context.Context, ref otp.CheckRef, v otp.Verification, decide func(otp.Verification) (otp.Verification, otp.CheckOutcome)) (otp.Verification, otp.CheckOutcome, error) {
	decided, oc := decide(v)
	closedAt := decided.SettledClosedAt(ref.Now).Truncate(time.Microsecond)
	typ, extra := closingEvent(v.Status, decided.Status)
	var saved bool
	err := s.pool.QueryRow(ctx, `WITH u AS (
			UPDATE verifications SET status = $2, attempts = $3, closed_at = $4
			WHERE id = $1 AND status = $5 AND attempts = $6 AND expires_at = $7 AND cardinality(code_hashes) = $8
			RETURNING id, app_id, channel, phone, phone_sealed, status, sends, attempts, expires_at
		), a AS (
			INSERT INTO attempts (verification_id, outcome, client_ip, created_at)
			SELECT id, $9, $10, $11 FROM u
		), e AS (
			INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
			SELECT otpgate_event_id($12, v.id), w.id, $12, v.id, `+verificationData+` || $13::jsonb, $11, $11
			FROM u AS v JOIN webhook_endpoints w ON w.app_id = v.app_id AND $12 = ANY(w.event_types)
			WHERE $12 <> ''
			ON CONFLICT DO NOTHING
		)
		SELECT true FROM u`,
		v.ID, string(decided.Status), decided.Attempts, nullTime(closedAt),
		string(v.Status), v.Attempts, v.ExpiresAt, len(v.CodeHashes),
		string(oc), ref.ClientIP, ref.Now, typ, extraJSON(extra)).Scan(&saved)
	if errors.Is(err, pgx.ErrNoRows) {
		return otp.Verification{}, "", errChanged
	}
	if err != nil {
		return otp.Verification{}, "", err
	}
	// The row is v with what was saved: nothing else changed, or the update would have
	// matched nothing (codes are only ever appended, so an equal count is the same codes).
	out := v
	out.Status, out.Attempts, out.ClosedAt = decided.Status, decided.Attempts, closedAt.UTC()
	return out, oc, nil
}

// closingEvent is the event a check that moves a verification from one status to another
// reports, with its extra payload fields; "" when it reports none.
func closingEvent(from, to otp.Status) (string, map[string]string) {
	if from != otp.StatusPending {
		return "", nil
	}
	switch to {
	case otp.StatusApproved:
		return events.VerificationApproved, nil
	case otp.StatusExpired:
		return events.VerificationExpired, nil
	case otp.StatusFailed:
		return events.VerificationFailed, map[string]string{"reason": "too_many_attempts"}
	}
	return "", nil
}
