package twilioapi

import (
	"net/http"
	"time"

	"otpgate/internal/apps"
)

// bucketParams reads Max and Interval.
func bucketParams(p *params) (maxSends *int, interval *time.Duration) {
	if n, ok := p.integer("Max", 1, 1_000_000); ok {
		maxSends = &n
	}
	if n, ok := p.integer("Interval", 1, 86_400); ok {
		i := time.Duration(n) * time.Second
		interval = &i
	}
	return maxSends, interval
}

// handleBucketCreate serves POST …/RateLimits/{RateLimitSid}/Buckets: Max and Interval.
func handleBucketCreate(d Deps) http.Handler {
	return accountOnly(d, func(w http.ResponseWriter, r *http.Request, c call) {
		rl, err := urlID(r, "RateLimitSid", "RK")
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		p := newParams(r.PostForm, "Max", "Interval")
		maxSends, interval := bucketParams(p)
		for name, missing := range map[string]bool{"Max": maxSends == nil && !p.has("Max"), "Interval": interval == nil && !p.has("Interval")} {
			if missing {
				p.fields[name] = "is required"
			}
		}
		if err := p.err(); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		b, err := d.RateLimits.AddBucket(r.Context(), c.app.ID, rl, *maxSends, *interval)
		if err != nil {
			writeError(w, r, d.Logger, notFound(renamed(err, rateLimitFields)))
			return
		}
		writeJSON(w, http.StatusCreated, newBucket(r, c.app, b))
	})
}

// handleBucketList serves GET …/RateLimits/{RateLimitSid}/Buckets.
func handleBucketList(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := urlID(r, "RateLimitSid", "RK")
		p := newParams(r.URL.Query(), pagingParams...)
		pr := readPage(p)
		if err == nil {
			err = p.err()
		}
		var rl apps.RateLimit
		if err == nil {
			rl, err = d.RateLimits.Get(r.Context(), c.app.ID, id)
		}
		if err != nil {
			writeError(w, r, d.Logger, notFound(err))
			return
		}
		all := make([]bucket, len(rl.Buckets))
		for i, b := range rl.Buckets {
			all[i] = newBucket(r, c.app, b)
		}
		items, more := pageOf(all, pr)
		writeJSON(w, http.StatusOK, struct {
			Buckets []bucket `json:"buckets"`
			Meta    meta     `json:"meta"`
		}{append([]bucket{}, items...), newMeta(r, rateLimitPath(c.app, rl.ID)+"/Buckets", "buckets", pr, more, "")})
	})
}

// bucketIDs reads the rate limit's and the bucket's sids of the URL.
func bucketIDs(r *http.Request) (rl, id string, err error) {
	if rl, err = urlID(r, "RateLimitSid", "RK"); err == nil {
		id, err = urlID(r, "Sid", "BL")
	}
	return rl, id, err
}

// handleBucketFetch serves GET …/Buckets/{Sid}.
func handleBucketFetch(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		rl, id, err := bucketIDs(r)
		if err == nil {
			err = newParams(r.URL.Query()).err()
		}
		var b apps.Bucket
		if err == nil {
			b, err = d.RateLimits.Bucket(r.Context(), c.app.ID, rl, id)
		}
		if err != nil {
			writeError(w, r, d.Logger, notFound(err))
			return
		}
		writeJSON(w, http.StatusOK, newBucket(r, c.app, b))
	})
}

// handleBucketUpdate serves POST …/Buckets/{Sid}: Max, Interval.
func handleBucketUpdate(d Deps) http.Handler {
	return accountOnly(d, func(w http.ResponseWriter, r *http.Request, c call) {
		rl, id, err := bucketIDs(r)
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		p := newParams(r.PostForm, "Max", "Interval")
		maxSends, interval := bucketParams(p)
		if err := p.err(); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		b, err := d.RateLimits.UpdateBucket(r.Context(), c.app.ID, rl, id, maxSends, interval)
		if err != nil {
			writeError(w, r, d.Logger, notFound(renamed(err, rateLimitFields)))
			return
		}
		writeJSON(w, http.StatusOK, newBucket(r, c.app, b))
	})
}

// handleBucketDelete serves DELETE …/Buckets/{Sid}.
func handleBucketDelete(d Deps) http.Handler {
	return accountOnly(d, func(w http.ResponseWriter, r *http.Request, c call) {
		rl, id, err := bucketIDs(r)
		if err == nil {
			err = d.RateLimits.DeleteBucket(r.Context(), c.app.ID, rl, id)
		}
		if err != nil {
			writeError(w, r, d.Logger, notFound(err))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
