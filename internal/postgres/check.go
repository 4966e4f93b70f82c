package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/otp"
)

// Verification implements otp.Store.
func (s *Store) Verification(ctx context.Context, id string) (otp.Verification, error) {
	if !validID(id) {
		return otp.Verification{}, fmt.Errorf("postgres: verification: %w", otp.ErrNotFound)
	}
	v, err := scanVerification(s.pool.QueryRow(ctx, `SELECT `+verificationCols+` FROM verifications WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		err = otp.ErrNotFound
	}
	return v, wrap("verification", err)
}

// Check implements otp.Store. The row lock makes concurrent checks of one
// verification take turns, each deciding on the counts the previous one saved.
func (s *Store) Check(ctx context.Context, ref otp.CheckRef, decide func(otp.Verification) (otp.Verification, otp.CheckOutcome)) (otp.Verification, otp.CheckOutcome, error) {
	var query, key string
	appID := otp.StoredAppID(ref.AppID)
	switch {
	case !validID(appID):
		return otp.Verification{}, "", fmt.Errorf("postgres: check: %w", otp.ErrNotFound)
	case ref.ID != "" && validID(ref.ID):
		query, key = `SELECT `+verificationCols+` FROM verifications WHERE id = $1 AND app_id = $2 FOR UPDATE`, ref.ID
	case ref.ID == "" && ref.Phone != "":
		query, key = `SELECT `+verificationCols+` FROM verifications WHERE phone = $1 AND app_id = $2
			ORDER BY created_at DESC, id DESC LIMIT 1 FOR UPDATE`, ref.Phone
	default:
		return otp.Verification{}, "", fmt.Errorf("postgres: check: %w", otp.ErrNotFound)
	}
	var (
		out     otp.Verification
		outcome otp.CheckOutcome
	)
	err := s.inTx(ctx, "check", func(tx pgx.Tx) error {
		v, err := scanVerification(tx.QueryRow(ctx, query, key, appID))
		if errors.Is(err, pgx.ErrNoRows) {
			return otp.ErrNotFound
		}
		if err != nil {
			return err
		}
		decided, oc := decide(v)
		closedAt := decided.SettledClosedAt(ref.Now)
		out, err = scanVerification(tx.QueryRow(ctx, `UPDATE verifications SET status = $2, attempts = $3, closed_at = $4
			WHERE id = $1 RETURNING `+verificationCols, v.ID, string(decided.Status), decided.Attempts, nullTime(closedAt)))
		if err != nil {
			return err
		}
		outcome = oc
		_, err = tx.Exec(ctx, `INSERT INTO attempts (verification_id, outcome, client_ip, created_at)
			VALUES ($1, $2, $3, $4)`, v.ID, string(oc), ref.ClientIP, ref.Now)
		return err
	})
	if err != nil {
		return otp.Verification{}, "", err
	}
	return out, outcome, nil
}
