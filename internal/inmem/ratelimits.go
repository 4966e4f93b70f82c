package inmem

import (
	"context"
	"slices"
	"strings"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
)

var _ apps.RateLimitStore = (*Store)(nil)

// RateLimits implements apps.RateLimitStore.
func (s *Store) RateLimits(ctx context.Context, appID string) ([]apps.RateLimit, error) {
	if err := alive("rate limits", ctx); err != nil {
		return nil, err
	}
	appID = otp.StoredAppID(strings.ToLower(appID))
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []apps.RateLimit
	for _, r := range s.appTables().rateLimits {
		if r.AppID == appID {
			r.Buckets = slices.Clone(r.Buckets)
			out = append(out, r)
		}
	}
	return out, nil
}

// CreateRateLimit implements apps.RateLimitStore.
func (s *Store) CreateRateLimit(ctx context.Context, r apps.RateLimit) error {
	if err := alive("create rate limit", ctx); err != nil {
		return err
	}
	r.AppID = otp.StoredAppID(r.AppID)
	r.CreatedAt, r.UpdatedAt, r.Buckets = ts(r.CreatedAt), ts(r.UpdatedAt), nil
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.appTables()
	for _, o := range tables.rateLimits {
		if o.AppID == r.AppID && o.UniqueName == r.UniqueName {
			return &otp.ErrInvalidRequest{Fields: map[string]string{"unique_name": "is the name of another rate limit of this service"}}
		}
	}
	tables.rateLimits = append(tables.rateLimits, r)
	return nil
}

// findRateLimit is the index of an app's rate limit, or -1.
func (s *Store) findRateLimit(appID, id string) int {
	appID = otp.StoredAppID(appID)
	return slices.IndexFunc(s.appTables().rateLimits, func(r apps.RateLimit) bool { return r.AppID == appID && r.ID == id })
}

// UpdateRateLimit implements apps.RateLimitStore.
func (s *Store) UpdateRateLimit(ctx context.Context, appID, id, description string, now time.Time) error {
	if err := alive("update rate limit", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.findRateLimit(appID, id)
	if i < 0 {
		return otp.ErrNotFound
	}
	tables := s.appTables()
	tables.rateLimits[i].Description, tables.rateLimits[i].UpdatedAt = description, ts(now)
	return nil
}

// DeleteRateLimit implements apps.RateLimitStore.
func (s *Store) DeleteRateLimit(ctx context.Context, appID, id string) error {
	if err := alive("delete rate limit", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.findRateLimit(appID, id)
	if i < 0 {
		return otp.ErrNotFound
	}
	tables := s.appTables()
	tables.rateLimits = slices.Delete(tables.rateLimits, i, i+1)
	return nil
}

// CreateBucket implements apps.RateLimitStore.
func (s *Store) CreateBucket(ctx context.Context, appID string, b apps.Bucket) error {
	if err := alive("create bucket", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.findRateLimit(appID, b.RateLimitID)
	if i < 0 {
		return otp.ErrNotFound
	}
	b.CreatedAt, b.UpdatedAt = ts(b.CreatedAt), ts(b.UpdatedAt)
	tables := s.appTables()
	tables.rateLimits[i].Buckets = append(tables.rateLimits[i].Buckets, b)
	return nil
}

// UpdateBucket implements apps.RateLimitStore.
func (s *Store) UpdateBucket(ctx context.Context, appID string, b apps.Bucket) error {
	if err := alive("update bucket", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.findRateLimit(appID, b.RateLimitID)
	if i < 0 {
		return otp.ErrNotFound
	}
	buckets := s.appTables().rateLimits[i].Buckets
	j := slices.IndexFunc(buckets, func(o apps.Bucket) bool { return o.ID == b.ID })
	if j < 0 {
		return otp.ErrNotFound
	}
	buckets[j].Max, buckets[j].Interval, buckets[j].UpdatedAt = b.Max, b.Interval, ts(b.UpdatedAt)
	return nil
}

// DeleteBucket implements apps.RateLimitStore.
func (s *Store) DeleteBucket(ctx context.Context, appID, rateLimitID, id string) error {
	if err := alive("delete bucket", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.findRateLimit(appID, rateLimitID)
	if i < 0 {
		return otp.ErrNotFound
	}
	tables := s.appTables()
	buckets := tables.rateLimits[i].Buckets
	j := slices.IndexFunc(buckets, func(o apps.Bucket) bool { return o.ID == id })
	if j < 0 {
		return otp.ErrNotFound
	}
	tables.rateLimits[i].Buckets = slices.Delete(slices.Clone(buckets), j, j+1)
	return nil
}
