package twilioapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// RateLimits is what the Rate Limits and Buckets resources and RateLimits on a create
// need: apps.RateLimitService.
type RateLimits interface {
	List(ctx context.Context, appID string) ([]apps.RateLimit, error)
	Get(ctx context.Context, appID, id string) (apps.RateLimit, error)
	Create(ctx context.Context, appID, uniqueName, description string) (apps.RateLimit, error)
	Update(ctx context.Context, appID, id, description string) (apps.RateLimit, error)
	Delete(ctx context.Context, appID, id string) error
	Bucket(ctx context.Context, appID, rateLimitID, id string) (apps.Bucket, error)
	AddBucket(ctx context.Context, appID, rateLimitID string, maxSends int, interval time.Duration) (apps.Bucket, error)
	UpdateBucket(ctx context.Context, appID, rateLimitID, id string, maxSends *int, interval *time.Duration) (apps.Bucket, error)
	DeleteBucket(ctx context.Context, appID, rateLimitID, id string) error
	SendLimits(ctx context.Context, appID string, values map[string]string) ([]rate.KeyedLimit, error)
}

// rateLimit is Twilio's Rate Limit resource.
type rateLimit struct {
	Sid         string            `json:"sid"`
	ServiceSid  string            `json:"service_sid"`
	AccountSid  string            `json:"account_sid"`
	UniqueName  string            `json:"unique_name"`
	Description string            `json:"description"`
	DateCreated string            `json:"date_created"`
	DateUpdated string            `json:"date_updated"`
	URL         string            `json:"url"`
	Links       map[string]string `json:"links"`
}

// bucket is Twilio's Bucket resource: Max sends per Interval seconds.
type bucket struct {
	Sid          string `json:"sid"`
	RateLimitSid string `json:"rate_limit_sid"`
	ServiceSid   string `json:"service_sid"`
	AccountSid   string `json:"account_sid"`
	Max          int    `json:"max"`
	Interval     int    `json:"interval"`
	DateCreated  string `json:"date_created"`
	DateUpdated  string `json:"date_updated"`
	URL          string `json:"url"`
}

func rateLimitPath(app otp.App, id string) string {
	return "/Services/" + apps.ServiceSID(app.ID) + "/RateLimits/" + sid("RK", id)
}

func newRateLimit(r *http.Request, app otp.App, rl apps.RateLimit) rateLimit {
	path := rateLimitPath(app, rl.ID)
	return rateLimit{
		Sid: sid("RK", rl.ID), ServiceSid: apps.ServiceSID(app.ID), AccountSid: accountSID(app),
		UniqueName: rl.UniqueName, Description: rl.Description,
		DateCreated: twilioTime(rl.CreatedAt), DateUpdated: twilioTime(rl.UpdatedAt),
		URL: resourceURL(r, path), Links: map[string]string{"buckets": resourceURL(r, path+"/Buckets")},
	}
}

func newBucket(r *http.Request, app otp.App, b apps.Bucket) bucket {
	return bucket{
		Sid: sid("BL", b.ID), RateLimitSid: sid("RK", b.RateLimitID), ServiceSid: apps.ServiceSID(app.ID), AccountSid: accountSID(app),
		Max: b.Max, Interval: int(b.Interval / time.Second),
		DateCreated: twilioTime(b.CreatedAt), DateUpdated: twilioTime(b.UpdatedAt),
		URL: resourceURL(r, rateLimitPath(app, b.RateLimitID)+"/Buckets/"+sid("BL", b.ID)),
	}
}

// urlID reads a sid of the URL; anything else names no resource.
func urlID(r *http.Request, param, prefix string) (string, error) {
	id, ok := apps.IDFromSID(chi.URLParam(r, param), prefix)
	if !ok {
		return "", errNoResource
	}
	return id, nil
}

// rateLimitFields name the domain's fields by the resources' parameters.
var rateLimitFields = map[string]string{"unique_name": "UniqueName", "description": "Description", "max": "Max", "interval": "Interval"}

// sendRateLimits reads RateLimits of a create: a JSON object of unique names to values,
// as Twilio's libraries send it, or RateLimits[name]=value fields. Errors:
// *otp.ErrInvalidRequest.
func sendRateLimits(r *http.Request) (map[string]string, error) {
	out := map[string]string{}
	bad := func(why string) error {
		return &otp.ErrInvalidRequest{Fields: map[string]string{"RateLimits": why}}
	}
	for name, values := range r.PostForm {
		key, isField := strings.CutPrefix(name, "RateLimits[")
		switch {
		case name == "RateLimits":
			if len(values) != 1 {
				return nil, bad("must be given once")
			}
			var obj map[string]any
			d := json.NewDecoder(strings.NewReader(values[0]))
			d.UseNumber()
			if err := d.Decode(&obj); err != nil || d.More() {
				return nil, bad("must be a JSON object of rate limit unique names to values")
			}
			for k, v := range obj {
				switch v := v.(type) {
				case string:
					out[k] = v
				case json.Number:
					out[k] = v.String()
				default:
					return nil, bad("each value must be a string or a number")
				}
			}
		case isField && strings.HasSuffix(key, "]"):
			if len(values) != 1 {
				return nil, bad("each rate limit must be given once")
			}
			out[strings.TrimSuffix(key, "]")] = values[0]
		}
	}
	return out, nil
}

// handleRateLimitCreate serves POST /Services/{ServiceSid}/RateLimits (account credential).
func handleRateLimitCreate(d Deps) http.Handler {
	return accountOnly(d, func(w http.ResponseWriter, r *http.Request, c call) {
		p := newParams(r.PostForm, "UniqueName", "Description")
		name, _ := p.str("UniqueName")
		desc, _ := p.str("Description")
		if err := p.err(); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		rl, err := d.RateLimits.Create(r.Context(), c.app.ID, name, desc)
		if err != nil {
			writeError(w, r, d.Logger, renamed(err, rateLimitFields))
			return
		}
		writeJSON(w, http.StatusCreated, newRateLimit(r, c.app, rl))
	})
}

// handleRateLimitList serves GET /Services/{ServiceSid}/RateLimits.
func handleRateLimitList(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		p := newParams(r.URL.Query(), pagingParams...)
		pr := readPage(p)
		if err := p.err(); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		list, err := d.RateLimits.List(r.Context(), c.app.ID)
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		all := make([]rateLimit, len(list))
		for i, rl := range list {
			all[i] = newRateLimit(r, c.app, rl)
		}
		items, more := pageOf(all, pr)
		writeJSON(w, http.StatusOK, struct {
			RateLimits []rateLimit `json:"rate_limits"`
			Meta       meta        `json:"meta"`
		}{append([]rateLimit{}, items...), newMeta(r, "/Services/"+apps.ServiceSID(c.app.ID)+"/RateLimits", "rate_limits", pr, more, "")})
	})
}

// handleRateLimitFetch serves GET /Services/{ServiceSid}/RateLimits/{Sid}.
func handleRateLimitFetch(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := urlID(r, "Sid", "RK")
		var rl apps.RateLimit
		if err == nil {
			err = newParams(r.URL.Query()).err()
		}
		if err == nil {
			rl, err = d.RateLimits.Get(r.Context(), c.app.ID, id)
		}
		if err != nil {
			writeError(w, r, d.Logger, notFound(err))
			return
		}
		writeJSON(w, http.StatusOK, newRateLimit(r, c.app, rl))
	})
}

// handleRateLimitUpdate serves POST /Services/{ServiceSid}/RateLimits/{Sid}: Description.
func handleRateLimitUpdate(d Deps) http.Handler {
	return accountOnly(d, func(w http.ResponseWriter, r *http.Request, c call) {
		id, err := urlID(r, "Sid", "RK")
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		p := newParams(r.PostForm, "Description")
		desc, _ := p.str("Description")
		if err := p.err(); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		rl, err := d.RateLimits.Update(r.Context(), c.app.ID, id, desc)
		if err != nil {
			writeError(w, r, d.Logger, notFound(renamed(err, rateLimitFields)))
			return
		}
		writeJSON(w, http.StatusOK, newRateLimit(r, c.app, rl))
	})
}

// handleRateLimitDelete serves DELETE /Services/{ServiceSid}/RateLimits/{Sid}.
func handleRateLimitDelete(d Deps) http.Handler {
	return accountOnly(d, func(w http.ResponseWriter, r *http.Request, c call) {
		id, err := urlID(r, "Sid", "RK")
		if err == nil {
			err = d.RateLimits.Delete(r.Context(), c.app.ID, id)
		}
		if err != nil {
			writeError(w, r, d.Logger, notFound(err))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// notFound names a missing rate limit or bucket as Twilio does: the resource was not found.
func notFound(err error) error {
	if otp.ErrorCode(err) == otp.CodeNotFound {
		return errNoResource
	}
	return err
}

// accountOnly serves a change, which only the account credential may make, with its form read.
func accountOnly(d Deps, h func(http.ResponseWriter, *http.Request, call)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if !isAccount(c.key) {
			writeError(w, r, d.Logger, errAccountOnly)
			return
		}
		if err := form(r); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		h(w, r, c)
	})
}

// rateLimitRoutes adds Rate Limits and Buckets to the router of /Services/{ServiceSid}.
func rateLimitRoutes(r chi.Router, d Deps) {
	r.Method(http.MethodPost, "/RateLimits", handleRateLimitCreate(d))
	r.Method(http.MethodGet, "/RateLimits", handleRateLimitList(d))
	r.Method(http.MethodGet, "/RateLimits/{Sid}", handleRateLimitFetch(d))
	r.Method(http.MethodPost, "/RateLimits/{Sid}", handleRateLimitUpdate(d))
	r.Method(http.MethodDelete, "/RateLimits/{Sid}", handleRateLimitDelete(d))
	r.Method(http.MethodPost, "/RateLimits/{RateLimitSid}/Buckets", handleBucketCreate(d))
	r.Method(http.MethodGet, "/RateLimits/{RateLimitSid}/Buckets", handleBucketList(d))
	r.Method(http.MethodGet, "/RateLimits/{RateLimitSid}/Buckets/{Sid}", handleBucketFetch(d))
	r.Method(http.MethodPost, "/RateLimits/{RateLimitSid}/Buckets/{Sid}", handleBucketUpdate(d))
	r.Method(http.MethodDelete, "/RateLimits/{RateLimitSid}/Buckets/{Sid}", handleBucketDelete(d))
}
