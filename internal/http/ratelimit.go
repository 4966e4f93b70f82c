package http

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// setRateLimitHeaders writes the RateLimit-Policy and RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers) for the decision's rule closest to its limit,
// such as
//
//	RateLimit-Policy: "phone-1m";q=1;w=60
//	RateLimit: "phone-1m";r=0;t=42
//
// The policy is named "<scope>-<window>"; keys (phone, IP) are never shown. It reports
// false, writing nothing, when the decision has no rules.
func setRateLimitHeaders(h http.Header, d rate.Decision) bool {
	s, ok := d.Closest()
	if !ok {
		return false
	}
	name := sfString(s.Scope + "-" + rate.FormatWindow(s.Rule.Window))
	// The quota comes back when the oldest counted request leaves the window; for a
	// refused rule that is its retry-after, which can only be later.
	reset := max(s.ResetAfter, s.RetryAfter)
	h.Set("RateLimit-Policy", name+";q="+strconv.Itoa(s.Rule.Limit)+";w="+strconv.FormatInt(httpkit.CeilSeconds(s.Rule.Window), 10))
	h.Set("RateLimit", name+";r="+strconv.Itoa(max(s.Remaining, 0))+";t="+strconv.FormatInt(httpkit.CeilSeconds(reset), 10))
	return true
}

// setSendRateLimitHeaders gives every response of the send endpoint its rate-limit
// headers: from d when the limiter answered, else from the client IP's current state.
// That state is not read when err says a backing service is unavailable: when Redis is
// what failed, asking it again would only double the time to the 503 that fails the
// request closed. When the state cannot be read, the headers are left out; the response
// itself already says what went wrong.
func setSendRateLimitHeaders(ctx context.Context, h http.Header, v otp.Verifier, d rate.Decision, err error) {
	if setRateLimitHeaders(h, d) || errors.Is(err, otp.ErrUnavailable) {
		return
	}
	state, err := v.SendLimitState(ctx, httpkit.ClientIPFrom(ctx))
	if err != nil {
		return
	}
	setRateLimitHeaders(h, state)
}

// sfString renders s as a structured-field String (RFC 8941): quoted, with '"' and '\'
// escaped; characters outside printable ASCII, which the syntax cannot carry, become '?'.
func sfString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
