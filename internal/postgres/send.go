package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/otp"
)

// BeginSend implements otp.Store: in one transaction it counts the send on the
// phone's pending verification (or a new one) and writes the send row.
func (s *Store) BeginSend(ctx context.Context, p otp.BeginSend) (otp.SendStart, error) {
	if !validID(p.NewVerificationID) || !validID(p.SendID) {
		return otp.SendStart{}, fmt.Errorf("postgres: begin send: %w: ids must be uuids", errBug)
	}
	var out otp.SendStart
	err := s.inTx(ctx, "begin send", func(tx pgx.Tx) error {
		v, created, err := countSend(ctx, tx, p)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO sends
			(id, verification_id, phone, client_ip, status, provider, created_at, updated_at, shadow)
			VALUES ($1, $2, $3, $4, 'sending', $5, $6, $6, $7)`,
			p.SendID, v.ID, p.Phone, p.ClientIP, p.Provider, p.Now, p.Shadow)
		out = otp.SendStart{Verification: v, Created: created}
		return err
	})
	return out, err
}

// countSend locks the phone's pending verification and counts one more send on it,
// or creates the verification. Two creators racing for one phone meet at the unique
// index of pending phones: the loser finds nothing inserted and reads the winner's row.
func countSend(ctx context.Context, tx pgx.Tx, p otp.BeginSend) (otp.Verification, bool, error) {
	for range 3 {
		v, err := scanVerification(tx.QueryRow(ctx,
			`SELECT `+verificationCols+` FROM verifications WHERE phone = $1 AND status = 'pending' FOR UPDATE`, p.Phone))
		switch {
		case err == nil && p.Now.Before(v.ExpiresAt):
			if v.Sends >= p.MaxSends {
				return v, false, &otp.ErrSendBudget{MaxSends: p.MaxSends, ExpiresAt: v.ExpiresAt}
			}
			v, err = scanVerification(tx.QueryRow(ctx, `UPDATE verifications
				SET sends = sends + 1, expires_at = $2, code_hashes = array_append(code_hashes, $3::bytea)
				WHERE id = $1 RETURNING `+verificationCols,
				v.ID, p.Now.Add(p.TTL), p.CodeHash(v.ID)))
			return v, false, err
		case err == nil:
			if _, err := tx.Exec(ctx, `UPDATE verifications SET status = 'expired', closed_at = $2 WHERE id = $1`, v.ID, p.Now); err != nil {
				return v, false, err
			}
		case !errors.Is(err, pgx.ErrNoRows):
			return v, false, err
		}
		v, err = scanVerification(tx.QueryRow(ctx, `INSERT INTO verifications
			(id, phone, channel, locale, status, code_hashes, sends, max_attempts, client_ip, created_at, expires_at)
			VALUES ($1, $2, $3, $4, 'pending', ARRAY[$5::bytea], 1, $6, $7, $8, $9)
			ON CONFLICT (phone) WHERE status = 'pending' DO NOTHING
			RETURNING `+verificationCols,
			p.NewVerificationID, p.Phone, p.Channel, p.Locale, p.CodeHash(p.NewVerificationID),
			p.MaxAttempts, p.ClientIP, p.Now, p.Now.Add(p.TTL)))
		if errors.Is(err, pgx.ErrNoRows) {
			continue // another send created it first; lock that one instead
		}
		return v, err == nil, err
	}
	return otp.Verification{}, false, errors.New("the phone's pending verification kept changing")
}

// FinishSend implements otp.Store. With Undo, the count is given back; a
// verification this send created is canceled unless another send has joined it.
func (s *Store) FinishSend(ctx context.Context, p otp.FinishSend) error {
	if p.Status != otp.SendSent && p.Status != otp.SendFailed {
		return fmt.Errorf("postgres: finish send: %w: status %q", errBug, p.Status)
	}
	if !validID(p.SendID) {
		return fmt.Errorf("postgres: finish send: %w", otp.ErrNotFound)
	}
	return s.inTx(ctx, "finish send", func(tx pgx.Tx) error {
		var vid string
		err := tx.QueryRow(ctx, `UPDATE sends SET status = $2, provider_message_id = $3, error = $4, updated_at = $5
			WHERE id = $1 AND verification_id IS NOT NULL RETURNING verification_id`,
			p.SendID, string(p.Status), p.ProviderID, p.Error, p.Now).Scan(&vid)
		if errors.Is(err, pgx.ErrNoRows) {
			return otp.ErrNotFound
		}
		if err != nil || !p.Undo {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE verifications SET
				sends = greatest(sends - 1, 0),
				status = CASE WHEN $2 AND sends <= 1 THEN 'canceled' ELSE status END,
				closed_at = CASE WHEN $2 AND sends <= 1 THEN $3 ELSE closed_at END
			WHERE id = $1 AND status = 'pending'`, vid, p.Created, p.Now)
		return err
	})
}
