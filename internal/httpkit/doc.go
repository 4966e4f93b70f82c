// Package httpkit is the HTTP kit the listeners share: strict JSON decoding and encoding,
// problem+json errors mapped from the domain's codes, the common middleware (request id,
// client address, access log, panics, body limit), the check that request text is text,
// and the health, not-found and method-not-allowed handlers. The public API
// (internal/http), the admin listener and the Twilio adapter build on it; it knows none of
// them.
package httpkit
