package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
)

var _ apps.RateLimitStore = (*Store)(nil)

// RateLimits implements apps.RateLimitStore: one statement, the buckets of each rate
// limit gathered as arrays.
func (s *Store) RateLimits(ctx context.Context, appID string) ([]apps.RateLimit, error) {
	appID = otp.StoredAppID(appID)
	if !validID(appID) {
		return nil, nil
	}
	rows, _ := s.pool.Query(ctx, `SELECT r.id, r.app_id, r.unique_name, r.description, r.created_at, r.updated_at,
			coalesce(array_agg(b.id ORDER BY b.created_at, b.id) FILTER (WHERE b.id IS NOT NULL), '{}'),
			coalesce(array_agg(b.max ORDER BY b.created_at, b.id) FILTER (WHERE b.id IS NOT NULL), '{}'),
			coalesce(array_agg(b.interval_seconds ORDER BY b.created_at, b.id) FILTER (WHERE b.id IS NOT NULL), '{}'),
			coalesce(array_agg(b.created_at ORDER BY b.created_at, b.id) FILTER (WHERE b.id IS NOT NULL), '{}'),
			coalesce(array_agg(b.updated_at ORDER BY b.created_at, b.id) FILTER (WHERE b.id IS NOT NULL), '{}')
		FROM app_rate_limits r LEFT JOIN app_rate_limit_buckets b ON b.rate_limit_id = r.id
		WHERE r.app_id = $1 GROUP BY r.id ORDER BY r.created_at, r.id`, appID)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (apps.RateLimit, error) {
		var (
			r                apps.RateLimit
			ids              []string
			maxes, intervals []int32
			created, updated []time.Time
		)
		if err := row.Scan(&r.ID, &r.AppID, &r.UniqueName, &r.Description, &r.CreatedAt, &r.UpdatedAt,
			&ids, &maxes, &intervals, &created, &updated); err != nil {
			return r, err
		}
		r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
		for i, id := range ids {
			r.Buckets = append(r.Buckets, apps.Bucket{ID: id, RateLimitID: r.ID, Max: int(maxes[i]),
				Interval: time.Duration(intervals[i]) * time.Second, CreatedAt: created[i].UTC(), UpdatedAt: updated[i].UTC()})
		}
		return r, nil
	})
	return out, wrap("rate limits", err)
}

// CreateRateLimit implements apps.RateLimitStore.
func (s *Store) CreateRateLimit(ctx context.Context, r apps.RateLimit) error {
	r.AppID = otp.StoredAppID(r.AppID)
	if !validID(r.ID) || !validID(r.AppID) {
		return fmt.Errorf("postgres: create rate limit: %w: ids must be uuids", errBug)
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO app_rate_limits (id, app_id, unique_name, description, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (app_id, unique_name) DO NOTHING`,
		r.ID, r.AppID, r.UniqueName, r.Description, r.CreatedAt, r.UpdatedAt)
	if err == nil && tag.RowsAffected() == 0 {
		return &otp.ErrInvalidRequest{Fields: map[string]string{"unique_name": "is the name of another rate limit of this service"}}
	}
	return wrap("create rate limit", err)
}

// UpdateRateLimit implements apps.RateLimitStore.
func (s *Store) UpdateRateLimit(ctx context.Context, appID, id, description string, now time.Time) error {
	return s.changeOne(ctx, "update rate limit", appID, id, `UPDATE app_rate_limits SET description = $3, updated_at = $4
		WHERE app_id = $1 AND id = $2`, description, now)
}

// DeleteRateLimit implements apps.RateLimitStore; its buckets go with it (ON DELETE CASCADE).
func (s *Store) DeleteRateLimit(ctx context.Context, appID, id string) error {
	return s.changeOne(ctx, "delete rate limit", appID, id, `DELETE FROM app_rate_limits WHERE app_id = $1 AND id = $2`)
}

// CreateBucket implements apps.RateLimitStore: the rate limit must be the app's.
func (s *Store) CreateBucket(ctx context.Context, appID string, b apps.Bucket) error {
	if !validID(b.ID) {
		return fmt.Errorf("postgres: create bucket: %w: ids must be uuids", errBug)
	}
	return s.changeOne(ctx, "create bucket", appID, b.RateLimitID, `INSERT INTO app_rate_limit_buckets
			(id, rate_limit_id, max, interval_seconds, created_at, updated_at)
		SELECT $3, r.id, $4, $5, $6, $6 FROM app_rate_limits r WHERE r.app_id = $1 AND r.id = $2`,
		b.ID, b.Max, int(b.Interval/time.Second), b.CreatedAt)
}

// UpdateBucket implements apps.RateLimitStore.
func (s *Store) UpdateBucket(ctx context.Context, appID string, b apps.Bucket) error {
	if !validID(b.ID) {
		return fmt.Errorf("postgres: update bucket: %w", otp.ErrNotFound)
	}
	return s.changeOne(ctx, "update bucket", appID, b.RateLimitID, `UPDATE app_rate_limit_buckets b
		SET max = $4, interval_seconds = $5, updated_at = $6
		FROM app_rate_limits r WHERE r.app_id = $1 AND r.id = $2 AND b.rate_limit_id = r.id AND b.id = $3`,
		b.ID, b.Max, int(b.Interval/time.Second), b.UpdatedAt)
}

// DeleteBucket implements apps.RateLimitStore.
func (s *Store) DeleteBucket(ctx context.Context, appID, rateLimitID, id string) error {
	if !validID(id) {
		return fmt.Errorf("postgres: delete bucket: %w", otp.ErrNotFound)
	}
	return s.changeOne(ctx, "delete bucket", appID, rateLimitID, `DELETE FROM app_rate_limit_buckets b
		USING app_rate_limits r WHERE r.app_id = $1 AND r.id = $2 AND b.rate_limit_id = r.id AND b.id = $3`, id)
}

// changeOne runs a statement on one rate limit of an app ($1 the app, $2 the rate limit,
// then args); a statement that changes no row found nothing: otp.ErrNotFound.
func (s *Store) changeOne(ctx context.Context, op, appID, id, sql string, args ...any) error {
	appID = otp.StoredAppID(appID)
	if !validID(appID) || !validID(id) {
		return fmt.Errorf("postgres: %s: %w", op, otp.ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, sql, append([]any{appID, id}, args...)...)
	if err == nil && tag.RowsAffected() == 0 {
		err = otp.ErrNotFound
	}
	if errors.Is(err, otp.ErrNotFound) {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	return wrap(op, err)
}
