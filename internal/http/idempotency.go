package http

import (
	"bytes"
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"time"

	"otpgate/internal/httpkit"
	"otpgate/internal/idempotent"
)

// Idempotency-Key handling, for the send endpoint.
const (
	maxIdempotencyKeyLen = 255
	// finishTimeout bounds storing or releasing a key after the response was written;
	// it runs detached from the request, so a client hanging up cannot leave its key locked.
	finishTimeout = 2 * time.Second
)

// replayable names the response headers a replay repeats; the rest (Date, X-Request-Id)
// belong to the new request. name is in canonical form.
func replayable(name string) bool {
	switch name {
	case "Content-Type", "Ratelimit-Policy", "Ratelimit", "Retry-After":
		return true
	}
	return false
}

// replayableHeaders copies the headers a replay repeats, under their canonical names.
func replayableHeaders(h http.Header) http.Header {
	out := http.Header{}
	for name, vs := range h {
		if name = http.CanonicalHeaderKey(name); replayable(name) {
			out[name] = append(out[name], vs...)
		}
	}
	return out
}

// idempotencyKey returns the request's Idempotency-Key, "" when absent. A key must be
// one header line of 1–255 printable ASCII characters.
func idempotencyKey(h http.Header) (string, error) {
	values := h.Values("Idempotency-Key")
	if len(values) == 0 {
		return "", nil
	}
	bad := httpkit.InvalidRequest("Idempotency-Key must be one header of 1 to 255 printable ASCII characters",
		map[string]string{"Idempotency-Key": "must be 1 to 255 printable ASCII characters"})
	if len(values) > 1 || len(values[0]) == 0 || len(values[0]) > maxIdempotencyKeyLen {
		return "", bad
	}
	for _, c := range []byte(values[0]) {
		if c < 0x20 || c > 0x7e {
			return "", bad
		}
	}
	return values[0], nil
}

// storable says which outcomes are kept for replay: those that changed state. A 2xx sent
// an SMS; a 502 may have (a provider timeout) or spent a send, and repeating it could
// deliver a second code, so the retry gets the same 502. Every other outcome (400, 409,
// 413, 415, 422, 429, 503, 500) changed nothing, so the key is released and a retry is
// evaluated afresh: after a 429 or a 503 it may well succeed.
func storable(status int) bool {
	return status >= 200 && status < 300 || status == http.StatusBadGateway
}

// serveOnce runs serve at most once per (endpoint, key, body). A repeat with the same
// body gets the stored response with Idempotent-Replayed: true; the store's refusals
// (in flight, key reused, unavailable) go to fail.
func serveOnce(w http.ResponseWriter, r *http.Request, log *slog.Logger, store idempotent.Store,
	endpoint, key string, body []byte, serve func(http.ResponseWriter), fail func(error)) {
	claim, err := store.Begin(r.Context(), endpoint, key, sha256.Sum256(body))
	if err != nil {
		fail(err)
		return
	}
	if claim.Replay != nil {
		replay(w, *claim.Replay)
		return
	}

	rec := &recorder{StatusWriter: httpkit.StatusWriter{ResponseWriter: w}}
	served := false
	// Deferred so that a panicking handler releases its key instead of holding it until
	// the lock expires.
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), finishTimeout)
		defer cancel()
		var err error
		if served && storable(rec.Status) {
			err = store.Complete(ctx, claim.Lock, rec.response())
		} else {
			err = store.Release(ctx, claim.Lock)
		}
		if err != nil {
			log.WarnContext(ctx, "idempotency key not finished", "request_id", httpkit.RequestIDFrom(ctx), "err", err)
		}
	}()
	serve(rec)
	served = true
}

// replay writes a stored response as it was first sent; the recorder kept only the
// headers worth replaying.
func replay(w http.ResponseWriter, resp idempotent.Response) {
	for name, vs := range resp.Header {
		w.Header()[name] = vs
	}
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// recorder passes a response through while keeping a copy for the idempotency store:
// its status (kept by the StatusWriter), the headers a replay repeats, and its body.
type recorder struct {
	httpkit.StatusWriter
	header http.Header
	body   bytes.Buffer
}

func (rec *recorder) WriteHeader(status int) {
	if rec.Status == 0 && status >= 200 {
		rec.header = replayableHeaders(rec.Header())
	}
	rec.StatusWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.Status == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	rec.body.Write(b)
	return rec.StatusWriter.Write(b)
}

// response is what was sent, in the form the store keeps.
func (rec *recorder) response() idempotent.Response {
	return idempotent.Response{Status: rec.Status, Header: rec.header, Body: rec.body.Bytes()}
}
