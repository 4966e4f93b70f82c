package sms

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"otpgate/internal/otp"
)

// post sends one request body of the given content type to a provider's endpoint and
// reads a bounded part of its reply. auth sets the request's credentials (nil sets none).
// A request that cannot be built was never sent, so it is definite; a transport error is
// classified by transportError. What the reply's status means is the caller's to say.
func post(ctx context.Context, c *http.Client, provider, endpoint, contentType string, body []byte, auth func(*http.Request)) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return reply{}, fmt.Errorf("%s: build request: %w: %w", provider, otp.ErrNotDelivered, err)
	}
	if auth != nil {
		auth(req)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "otpgate")
	r, err := do(c, req)
	if err != nil {
		return reply{}, transportError(provider, err)
	}
	return r, nil
}

// postJSON is post of v encoded as JSON; a value that cannot be encoded is definite.
func postJSON(ctx context.Context, c *http.Client, provider, endpoint string, v any, auth func(*http.Request)) (reply, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return reply{}, fmt.Errorf("%s: encode: %w: %w", provider, otp.ErrNotDelivered, err)
	}
	return post(ctx, c, provider, endpoint, "application/json", raw, auth)
}

// postForm is post of form, URL-encoded.
func postForm(ctx context.Context, c *http.Client, provider, endpoint string, form url.Values, auth func(*http.Request)) (reply, error) {
	return post(ctx, c, provider, endpoint, "application/x-www-form-urlencoded", []byte(form.Encode()), auth)
}

// bearer sets an Authorization header of the given scheme, "Bearer" or Infobip's "App".
func bearer(scheme, token string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", scheme+" "+token) }
}

// basicAuth sets HTTP basic authentication.
func basicAuth(user, password string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(user, password) }
}
