// Package idempotent is the contract of Idempotency-Key records between the API that
// replays responses and the store that keeps them (internal/idempotency, over Redis): the
// claim on a key, the lock that proves it, and the response stored for replay. It imports
// nothing of otpgate, so the HTTP layers can know it without linking a driver; its refusals
// (otp.ErrIdempotencyInFlight, otp.ErrIdempotencyKeyReused) are the kernel's, which
// classifies them.
package idempotent

import "context"

// Store keeps Idempotency-Key records, so that a client's retry of a request
// that changed state gets the first response back instead of doing the work twice.
// internal/idempotency implements it over Redis.
type Store interface {
	// Begin claims key for a request to endpoint whose body hashes to bodyHash, or
	// returns the response stored for the key's first request with the same body.
	// Errors: otp.ErrIdempotencyInFlight, otp.ErrIdempotencyKeyReused, and errors
	// wrapping otp.ErrUnavailable.
	Begin(ctx context.Context, endpoint, key string, bodyHash [32]byte) (Claim, error)
	// Complete stores the response of the request that holds the lock. Errors wrap
	// otp.ErrUnavailable when the store fails; a lock lost to expiry is an error too.
	Complete(ctx context.Context, l Lock, r Response) error
	// Release gives the key up so that a retry is evaluated afresh. Errors wrap otp.ErrUnavailable.
	Release(ctx context.Context, l Lock) error
}

// Claim is what Begin found: either the key is now the caller's (Lock), or
// its first request already finished and Replay holds that request's response.
type Claim struct {
	Lock   Lock
	Replay *Response
}

// Lock is one request's claim on a key. Only the store that made it reads
// its fields; callers hand it back to Complete or Release as they got it.
type Lock struct {
	// Key is the store's own name of the record.
	Key string
	// Hash is the hash of the request body the key was claimed with.
	Hash string
	// Marker is the in-flight marker that proves the claim is still this request's.
	Marker string
}

// Response is an HTTP response kept for replay, as it was first sent.
type Response struct {
	Status int
	// Header holds the headers worth replaying, under canonical names; the caller chooses them.
	Header map[string][]string
	Body   []byte
}
