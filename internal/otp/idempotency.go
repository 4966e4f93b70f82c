package otp

import "context"

// IdempotencyStore keeps Idempotency-Key records, so that a client's retry of a request
// that changed state gets the first response back instead of doing the work twice.
// internal/idempotency implements it over Redis.
type IdempotencyStore interface {
	// Begin claims key for a request to endpoint whose body hashes to bodyHash, or
	// returns the response stored for the key's first request with the same body.
	// Errors: ErrIdempotencyInFlight, ErrIdempotencyKeyReused, and errors wrapping
	// ErrUnavailable.
	Begin(ctx context.Context, endpoint, key string, bodyHash [32]byte) (IdempotencyClaim, error)
	// Complete stores the response of the request that holds the lock. Errors wrap
	// ErrUnavailable when the store fails; a lock lost to expiry is an error too.
	Complete(ctx context.Context, l IdempotencyLock, r StoredResponse) error
	// Release gives the key up so that a retry is evaluated afresh. Errors wrap ErrUnavailable.
	Release(ctx context.Context, l IdempotencyLock) error
}

// IdempotencyClaim is what Begin found: either the key is now the caller's (Lock), or
// its first request already finished and Replay holds that request's response.
type IdempotencyClaim struct {
	Lock   IdempotencyLock
	Replay *StoredResponse
}

// IdempotencyLock is one request's claim on a key. Only the store that made it reads
// its fields; callers hand it back to Complete or Release as they got it.
type IdempotencyLock struct {
	// Key is the store's own name of the record.
	Key string
	// Hash is the hash of the request body the key was claimed with.
	Hash string
	// Marker is the in-flight marker that proves the claim is still this request's.
	Marker string
}

// StoredResponse is an HTTP response kept for replay, as it was first sent.
type StoredResponse struct {
	Status int
	// Header holds the headers worth replaying, under canonical names; the caller chooses them.
	Header map[string][]string
	Body   []byte
}
