package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/tokens"
)

var _ tokens.Store = (*Store)(nil)

// signingKeysLockID names the transaction lock that lets one instance at a time add a
// signing key.
const signingKeysLockID = 0x6f7470676b657973 // "otpgkeys"

// SigningKeys implements tokens.Store.
func (s *Store) SigningKeys(ctx context.Context) ([]tokens.StoredKey, error) {
	rows, _ := s.pool.Query(ctx, `SELECT id, alg, sealed, created_at, active_at FROM token_signing_keys ORDER BY created_at, id`)
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tokens.StoredKey, error) {
		var k tokens.StoredKey
		err := r.Scan(&k.ID, &k.Alg, &k.Sealed, &k.CreatedAt, &k.ActiveAt)
		k.CreatedAt, k.ActiveAt = k.CreatedAt.UTC(), k.ActiveAt.UTC()
		return k, err
	})
	return keys, wrap("signing keys", err)
}

// AddSigningKey implements tokens.Store: under a transaction lock, so that instances
// rotating at once add one key.
func (s *Store) AddSigningKey(ctx context.Context, k tokens.StoredKey, staleBefore time.Time) (bool, error) {
	var added bool
	err := s.inTx(ctx, "add signing key", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(signingKeysLockID)); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO token_signing_keys (id, alg, sealed, created_at, active_at)
			SELECT $1, $2, $3, $4, $5 WHERE NOT EXISTS (SELECT 1 FROM token_signing_keys WHERE created_at > $6)`,
			k.ID, k.Alg, k.Sealed, k.CreatedAt, k.ActiveAt, staleBefore)
		added = tag.RowsAffected() == 1
		return err
	})
	return added, err
}

// DeleteSigningKeys implements tokens.Store.
func (s *Store) DeleteSigningKeys(ctx context.Context, ids []string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM token_signing_keys WHERE id = ANY($1)`, ids)
	return wrap("delete signing keys", err)
}

// redemptionsPruned bounds how many records of expired tokens one redemption deletes.
const redemptionsPruned = 100

// Redeem implements tokens.Store in one statement, which also forgets a few redemptions
// of tokens that expired a while ago (a minute, for clocks that differ).
func (s *Store) Redeem(ctx context.Context, r tokens.Redemption) error {
	tag, err := s.pool.Exec(ctx, `WITH gone AS (
			DELETE FROM token_redemptions WHERE jti IN (
				SELECT jti FROM token_redemptions WHERE expires_at < $5 ORDER BY expires_at LIMIT $6 FOR UPDATE SKIP LOCKED))
		INSERT INTO token_redemptions (jti, app_id, expires_at, redeemed_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (jti) DO NOTHING`,
		r.JTI, r.AppID, r.ExpiresAt, r.RedeemedAt, r.RedeemedAt.Add(-time.Minute), redemptionsPruned)
	if err != nil {
		return wrap("redeem token", err)
	}
	if tag.RowsAffected() == 0 {
		return tokens.ErrRedeemed
	}
	return nil
}
