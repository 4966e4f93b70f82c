package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"otpgate/internal/signature"
)

// Headers of a delivery besides the signature (signature.Header, the same scheme as the
// SMS webhook: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>).
const (
	EventIDHeader   = "Otpgate-Event-Id"
	EventTypeHeader = "Otpgate-Event-Type"
)

// Post delivers ev to url, signed with secret at now: nil when the receiver answered 2xx.
// The error never holds the URL (it may carry a token) nor the secret.
func Post(ctx context.Context, client *http.Client, timeout time.Duration, u, secret string, ev Event, now time.Time) (status int, err error) {
	body, err := json.Marshal(ev)
	if err != nil {
		return 0, fmt.Errorf("encode event: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, errors.New("the endpoint's URL cannot be requested")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "otpgate-events")
	req.Header.Set(EventIDHeader, ev.ID)
	req.Header.Set(EventTypeHeader, ev.Type)
	req.Header.Set(signature.Header, signature.Sign(secret, now, body))
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, fmt.Errorf("no answer within %s", timeout)
		}
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("the receiver answered %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// backoff is the delay before the retry that follows the attempt-th failed attempt:
// base doubled at each attempt, at most top.
func backoff(attempt int, base, top time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < top; i++ {
		d *= 2
	}
	return min(d, top)
}

// jitter draws a delay between half of d and all of d, so retries of many events (and
// the loops of many instances) spread out instead of arriving together.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}
