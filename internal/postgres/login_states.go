package postgres

import (
	"context"
	"time"

	"otpgate/internal/operators"
)

// UseLoginState implements operators.Store. The insert and the purge of expired states
// are one statement; a state still in the table, however many instances there are,
// makes the insert a no-op and so the second use fails.
func (s *Store) UseLoginState(ctx context.Context, stateHash []byte, expires, now time.Time) error {
	tag, err := s.pool.Exec(ctx, `WITH expired AS (DELETE FROM oidc_login_states WHERE expires_at < $3)
		INSERT INTO oidc_login_states (state_sha256, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		stateHash, expires, now)
	if err != nil {
		return wrap("use login state", err)
	}
	if tag.RowsAffected() == 0 {
		return operators.ErrLoginUsed
	}
	return nil
}
