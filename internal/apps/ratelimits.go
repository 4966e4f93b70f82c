package apps

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"otpgate/internal/otp"
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
func Limits(list []RateLimit, values map[string]string) ([]otp.KeyedLimit, error) {
	f := map[string]string{}
	var out []otp.KeyedLimit
	for name, value := range values {
		i := indexByName(list, name)
		if i < 0 {
			f["RateLimits["+name+"]"] = "names no rate limit of this service"
			continue
		}
		r := list[i]
		k := otp.KeyedLimit{ID: r.ID, Name: r.UniqueName, Value: value}
		for _, b := range r.Buckets {
			k.Rules = append(k.Rules, otp.Rule{Limit: b.Max, Window: b.Interval})
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

