package apps

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// RateLimit is one of an app's rate limits (Twilio Verify's Service Rate Limits): a key
// that a send names with a value (RateLimits[unique_name]=value), limited by its buckets
// on (app, rate limit, value). Without buckets it limits nothing.
type RateLimit struct {
	ID          string
	AppID       string
	UniqueName  string
	Description string
	Buckets     []Bucket
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Bucket is one rule of a rate limit: at most Max sends per Interval, a sliding window.
type Bucket struct {
	ID          string
	RateLimitID string
	Max         int
	Interval    time.Duration
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Bounds of rate limits and buckets: a rule's window is at most a day, as the limiter's
// keys live for their longest window; names and values stay short in Redis keys.
const (
	maxUniqueNameLen  = 191
	maxDescriptionLen = 255
	// MaxRateLimits and MaxBuckets bound how many an app and a rate limit have.
	MaxRateLimits     = 100
	MaxBuckets        = 10
	maxBucketMax      = 1_000_000
	maxBucketInterval = 24 * time.Hour
)

// RateLimitStore keeps apps' rate limits and their buckets; internal/postgres and
// internal/inmem implement it.
type RateLimitStore interface {
	// RateLimits lists an app's rate limits with their buckets, oldest first.
	RateLimits(ctx context.Context, appID string) ([]RateLimit, error)
	// CreateRateLimit stores a new rate limit. Errors: *otp.ErrInvalidRequest naming
	// unique_name when the app has one of that name.
	CreateRateLimit(ctx context.Context, r RateLimit) error
	// UpdateRateLimit sets a rate limit's description. Errors: otp.ErrNotFound.
	UpdateRateLimit(ctx context.Context, appID, id, description string, now time.Time) error
	// DeleteRateLimit removes a rate limit and its buckets. Errors: otp.ErrNotFound.
	DeleteRateLimit(ctx context.Context, appID, id string) error
	// CreateBucket adds a bucket to a rate limit of the app. Errors: otp.ErrNotFound.
	CreateBucket(ctx context.Context, appID string, b Bucket) error
	// UpdateBucket sets a bucket's Max and Interval. Errors: otp.ErrNotFound.
	UpdateBucket(ctx context.Context, appID string, b Bucket) error
	// DeleteBucket removes a bucket. Errors: otp.ErrNotFound.
	DeleteBucket(ctx context.Context, appID, rateLimitID, id string) error
}

// CheckRateLimitNames says what is wrong with a rate limit's unique name and description,
// by field (unique_name, description), into f.
func CheckRateLimitNames(uniqueName, description string, f map[string]string) {
	switch {
	case uniqueName == "":
		f["unique_name"] = "is required"
	case len(uniqueName) > maxUniqueNameLen:
		f["unique_name"] = fmt.Sprintf("must be at most %d bytes", maxUniqueNameLen)
	case strings.ContainsFunc(uniqueName, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}):
		f["unique_name"] = "must be ASCII letters, digits, '_', '-' and '.'"
	}
	switch {
	case !utf8.ValidString(description):
		f["description"] = "must be valid UTF-8"
	case utf8.RuneCountInString(description) > maxDescriptionLen:
		f["description"] = fmt.Sprintf("must be at most %d characters", maxDescriptionLen)
	case strings.ContainsFunc(description, unicode.IsControl):
		f["description"] = "must not hold control characters"
	}
}

// CheckBucket says what is wrong with a bucket's max and interval, by field (max,
// interval), into f.
func CheckBucket(b Bucket, f map[string]string) {
	if b.Max < 1 || b.Max > maxBucketMax {
		f["max"] = fmt.Sprintf("must be between 1 and %d", maxBucketMax)
	}
	if b.Interval < time.Second || b.Interval > maxBucketInterval || b.Interval%time.Second != 0 {
		f["interval"] = fmt.Sprintf("must be whole seconds between 1 and %d", int(maxBucketInterval/time.Second))
	}
}

// Limits are the limits a send keyed by values (unique name → value) meets: each named
// rate limit's buckets as rules on the value. Errors: *otp.ErrInvalidRequest naming
// RateLimits[name] for a name the app has no rate limit of.
func Limits(list []RateLimit, values map[string]string) ([]rate.KeyedLimit, error) {
	f := map[string]string{}
	var out []rate.KeyedLimit
	for name, value := range values {
		i := indexByName(list, name)
		if i < 0 {
			f["RateLimits["+name+"]"] = "names no rate limit of this service"
			continue
		}
		r := list[i]
		k := rate.KeyedLimit{ID: r.ID, Name: r.UniqueName, Value: value}
		for _, b := range r.Buckets {
			k.Rules = append(k.Rules, rate.Rule{Limit: b.Max, Window: b.Interval})
		}
		out = append(out, k)
	}
	if len(f) > 0 {
		return nil, &otp.ErrInvalidRequest{Fields: f}
	}
	return out, nil
}

func indexByName(list []RateLimit, name string) int {
	for i, r := range list {
		if r.UniqueName == name {
			return i
		}
	}
	return -1
}

// RateLimitService manages apps' rate limits and turns a send's values into its limits;
// the Twilio API's Rate Limits and Buckets resources are its callers.
type RateLimitService struct {
	store RateLimitStore
	// Now and NewID are the clock and the id source; tests replace them.
	Now   func() time.Time
	NewID func() string
}

// NewRateLimitService returns the service over store.
func NewRateLimitService(store RateLimitStore) *RateLimitService {
	return &RateLimitService{store: store, Now: func() time.Time { return time.Now().UTC() }, NewID: newUUID}
}

// List is an app's rate limits with their buckets, oldest first.
func (s *RateLimitService) List(ctx context.Context, appID string) ([]RateLimit, error) {
	return s.store.RateLimits(ctx, appID)
}

// Get is one rate limit of an app. Errors: otp.ErrNotFound.
func (s *RateLimitService) Get(ctx context.Context, appID, id string) (RateLimit, error) {
	list, err := s.store.RateLimits(ctx, appID)
	if err != nil {
		return RateLimit{}, err
	}
	for _, r := range list {
		if r.ID == id {
			return r, nil
		}
	}
	return RateLimit{}, otp.ErrNotFound
}

// Create adds a rate limit to an app. Errors: *otp.ErrInvalidRequest naming unique_name
// or description.
func (s *RateLimitService) Create(ctx context.Context, appID, uniqueName, description string) (RateLimit, error) {
	f := map[string]string{}
	CheckRateLimitNames(uniqueName, description, f)
	if len(f) == 0 {
		if list, err := s.store.RateLimits(ctx, appID); err != nil {
			return RateLimit{}, err
		} else if len(list) >= MaxRateLimits {
			f["unique_name"] = fmt.Sprintf("the service has %d rate limits, the most it may have", MaxRateLimits)
		}
	}
	if len(f) > 0 {
		return RateLimit{}, &otp.ErrInvalidRequest{Fields: f}
	}
	now := s.Now()
	r := RateLimit{ID: s.NewID(), AppID: appID, UniqueName: uniqueName, Description: description, CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateRateLimit(ctx, r); err != nil {
		return RateLimit{}, err
	}
	return s.Get(ctx, appID, r.ID)
}

// Update sets a rate limit's description. Errors: otp.ErrNotFound, *otp.ErrInvalidRequest.
func (s *RateLimitService) Update(ctx context.Context, appID, id, description string) (RateLimit, error) {
	f := map[string]string{}
	CheckRateLimitNames("x", description, f)
	if len(f) > 0 {
		return RateLimit{}, &otp.ErrInvalidRequest{Fields: f}
	}
	if err := s.store.UpdateRateLimit(ctx, appID, id, description, s.Now()); err != nil {
		return RateLimit{}, err
	}
	return s.Get(ctx, appID, id)
}

// Delete removes a rate limit and its buckets. Errors: otp.ErrNotFound.
func (s *RateLimitService) Delete(ctx context.Context, appID, id string) error {
	return s.store.DeleteRateLimit(ctx, appID, id)
}

// Bucket is one bucket of a rate limit of an app. Errors: otp.ErrNotFound.
func (s *RateLimitService) Bucket(ctx context.Context, appID, rateLimitID, id string) (Bucket, error) {
	r, err := s.Get(ctx, appID, rateLimitID)
	if err != nil {
		return Bucket{}, err
	}
	for _, b := range r.Buckets {
		if b.ID == id {
			return b, nil
		}
	}
	return Bucket{}, otp.ErrNotFound
}

// AddBucket adds a bucket to a rate limit. Errors: otp.ErrNotFound, *otp.ErrInvalidRequest
// naming max or interval.
func (s *RateLimitService) AddBucket(ctx context.Context, appID, rateLimitID string, maxSends int, interval time.Duration) (Bucket, error) {
	r, err := s.Get(ctx, appID, rateLimitID)
	if err != nil {
		return Bucket{}, err
	}
	now := s.Now()
	b := Bucket{ID: s.NewID(), RateLimitID: r.ID, Max: maxSends, Interval: interval, CreatedAt: now, UpdatedAt: now}
	f := map[string]string{}
	CheckBucket(b, f)
	if len(r.Buckets) >= MaxBuckets {
		f["max"] = fmt.Sprintf("the rate limit has %d buckets, the most it may have", MaxBuckets)
	}
	if len(f) > 0 {
		return Bucket{}, &otp.ErrInvalidRequest{Fields: f}
	}
	if err := s.store.CreateBucket(ctx, appID, b); err != nil {
		return Bucket{}, err
	}
	return s.Bucket(ctx, appID, rateLimitID, b.ID)
}

// UpdateBucket changes a bucket's max or interval (nil keeps it). Errors: otp.ErrNotFound,
// *otp.ErrInvalidRequest.
func (s *RateLimitService) UpdateBucket(ctx context.Context, appID, rateLimitID, id string, maxSends *int, interval *time.Duration) (Bucket, error) {
	b, err := s.Bucket(ctx, appID, rateLimitID, id)
	if err != nil {
		return Bucket{}, err
	}
	if maxSends != nil {
		b.Max = *maxSends
	}
	if interval != nil {
		b.Interval = *interval
	}
	f := map[string]string{}
	if CheckBucket(b, f); len(f) > 0 {
		return Bucket{}, &otp.ErrInvalidRequest{Fields: f}
	}
	b.UpdatedAt = s.Now()
	if err := s.store.UpdateBucket(ctx, appID, b); err != nil {
		return Bucket{}, err
	}
	return s.Bucket(ctx, appID, rateLimitID, id)
}

// DeleteBucket removes a bucket. Errors: otp.ErrNotFound.
func (s *RateLimitService) DeleteBucket(ctx context.Context, appID, rateLimitID, id string) error {
	return s.store.DeleteBucket(ctx, appID, rateLimitID, id)
}

// SendLimits are the limits of a send that names values of the app's rate limits (unique
// name → value). Errors: *otp.ErrInvalidRequest naming each unknown name.
func (s *RateLimitService) SendLimits(ctx context.Context, appID string, values map[string]string) ([]rate.KeyedLimit, error) {
	if len(values) == 0 {
		return nil, nil
	}
	list, err := s.store.RateLimits(ctx, appID)
	if err != nil {
		return nil, err
	}
	return Limits(list, values)
}

// newUUID is a time-ordered id (UUID v7), so rows sort by creation.
func newUUID() string { return uuid.Must(uuid.NewV7()).String() }
