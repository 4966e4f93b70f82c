package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/apps"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// testNumberCols are read by scanTestNumber, in this order.
const testNumberCols = `id, app_id, address, code_sealed, expires_at, created_at`

func scanTestNumber(r pgx.CollectableRow) (apps.TestNumber, error) {
	var t apps.TestNumber
	err := r.Scan(&t.ID, &t.AppID, &t.Address, &t.Sealed, &t.ExpiresAt, &t.CreatedAt)
	t.ExpiresAt, t.CreatedAt = t.ExpiresAt.UTC(), t.CreatedAt.UTC()
	return t, err
}

// TestNumbers implements apps.Store.
func (s *Store) TestNumbers(ctx context.Context, appID string) ([]apps.TestNumber, error) {
	if !validID(appID) {
		return nil, nil
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+testNumberCols+` FROM app_test_numbers WHERE app_id = $1
		ORDER BY created_at DESC, id DESC`, appID)
	out, err := pgx.CollectRows(rows, scanTestNumber)
	return out, wrap("test numbers", err)
}

// errTestNumberTaken refuses a second working test number at one address of an app.
var errTestNumberTaken = &otp.ErrInvalidRequest{Fields: map[string]string{"address": "is a working test number of this app already"}}

// CreateTestNumber implements apps.Store: an expired entry at the address goes first, in
// the same transaction.
func (s *Store) CreateTestNumber(ctx context.Context, t apps.TestNumber, audit history.AdminAction) error {
	if !validID(t.ID) || !validID(t.AppID) {
		return fmt.Errorf("postgres: create test number: %w: ids must be uuids", errBug)
	}
	if err := otp.CheckTextIn("test number", t); err != nil {
		return fmt.Errorf("postgres: create test number: %w", err)
	}
	err := s.changeApps(ctx, "create test number", audit, func(tx pgx.Tx) (int64, error) {
		if _, err := tx.Exec(ctx, `DELETE FROM app_test_numbers WHERE app_id = $1 AND address = $2 AND expires_at <= $3`,
			t.AppID, t.Address, t.CreatedAt); err != nil {
			return 0, err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO app_test_numbers (`+testNumberCols+`) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (app_id, address) DO NOTHING`, t.ID, t.AppID, t.Address, t.Sealed, t.ExpiresAt, t.CreatedAt)
		if err == nil && tag.RowsAffected() == 0 {
			return 0, errTestNumberTaken
		}
		return tag.RowsAffected(), err
	})
	var invalid *otp.ErrInvalidRequest
	if errors.As(err, &invalid) {
		return invalid
	}
	return err
}

// DeleteTestNumber implements apps.Store.
func (s *Store) DeleteTestNumber(ctx context.Context, appID, id string, audit history.AdminAction) (apps.TestNumber, error) {
	if !validID(appID) || !validID(id) {
		return apps.TestNumber{}, fmt.Errorf("postgres: delete test number: %w", otp.ErrNotFound)
	}
	var t apps.TestNumber
	err := s.changeApps(ctx, "delete test number", audit, func(tx pgx.Tx) (int64, error) {
		rows, _ := tx.Query(ctx, `DELETE FROM app_test_numbers WHERE id = $1 AND app_id = $2 RETURNING `+testNumberCols, id, appID)
		list, err := pgx.CollectRows(rows, scanTestNumber)
		if len(list) == 1 {
			t = list[0]
		}
		return int64(len(list)), err
	})
	return t, err
}
