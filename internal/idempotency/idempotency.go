// Package idempotency keeps Idempotency-Key records in Redis, so that a client's retry of
// a request that changed state gets the first response back instead of doing the work twice.
//
// A record lives under one key, prefix + hex(SHA-256(endpoint ‖ 0x00 ‖ Idempotency-Key)),
// so client-chosen keys never reach Redis key names. It is first an in-flight marker
// (the request body's hash and a random lock token, expiring after LockTTL so that a
// crashed server cannot hold a key forever) and then, once completed, the stored response
// (expiring after the store's TTL). A stored response names the address it was for, so
// its body is sealed (Sealer) and Redis holds no phone number or email address.
package idempotency

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/idempotent"
	"otpgate/internal/otp"
	"otpgate/lua"
)

// ErrLockLost means the in-flight marker expired or was replaced before Complete. Begin's
// refusals are the domain's: otp.ErrIdempotencyInFlight and otp.ErrIdempotencyKeyReused.
var ErrLockLost = errors.New("idempotency: the key's in-flight lock was lost")

// DefaultLockTTL bounds how long an unfinished request holds its key; it is far longer
// than a send may take (SMS timeout plus store writes).
const DefaultLockTTL = time.Minute

// Record states, as stored.
const (
	stateInFlight = "in_flight"
	stateDone     = "done"
)

// Store keeps Idempotency-Key records in Redis (standalone, Sentinel or Cluster: every
// operation touches one key).
type Store struct {
	rdb      redis.UniversalClient
	prefix   string
	ttl      time.Duration
	complete *redis.Script
	release  *redis.Script

	// LockTTL is how long an in-flight marker lives when its request never finishes.
	LockTTL time.Duration
	// Timeout, when positive, bounds each operation, so a Redis that is down or slow
	// fails the request closed promptly instead of after the client's dial retries.
	Timeout time.Duration
	// Sealer, when set, seals the stored responses' bodies.
	Sealer Sealer
}

// Sealer encrypts what is stored and decrypts it again; pii.Keys is one.
type Sealer interface {
	Seal(plain string) string
	Open(sealed string) (string, error)
}

// New returns a store that keeps records under prefix for ttl after completion (24h by the contract).
func New(rdb redis.UniversalClient, prefix string, ttl time.Duration) *Store {
	return &Store{
		rdb: rdb, prefix: prefix, ttl: ttl,
		complete: redis.NewScript(lua.IdempotencyComplete),
		release:  redis.NewScript(lua.IdempotencyRelease),
		LockTTL:  DefaultLockTTL,
	}
}

// record is the JSON stored under a key.
type record struct {
	State  string      `json:"state"`
	Hash   string      `json:"hash"`
	Token  string      `json:"token,omitempty"`
	Status int         `json:"status,omitempty"`
	Header http.Header `json:"header,omitempty"`
	Body   []byte      `json:"body,omitempty"`
	// Sealed is the body sealed by the Sealer, in place of Body.
	Sealed string `json:"sealed,omitempty"`
}

// Begin claims key for a request to endpoint whose body hashes to bodyHash. It returns
// the stored response when the key's first request with the same body finished, and
// otherwise a lock the caller must pass to Complete or Release. Errors:
// otp.ErrIdempotencyInFlight, otp.ErrIdempotencyKeyReused, and errors wrapping
// otp.ErrUnavailable when Redis fails.
func (s *Store) Begin(ctx context.Context, endpoint, key string, bodyHash [32]byte) (idempotent.Claim, error) {
	ctx, cancel := otp.Bounded(ctx, s.Timeout)
	defer cancel()
	k := s.redisKey(endpoint, key)
	hash := hex.EncodeToString(bodyHash[:])
	// The random token makes two requests' markers differ, so each can only release its own.
	marker, err := json.Marshal(record{State: stateInFlight, Hash: hash, Token: rand.Text()})
	if err != nil {
		return idempotent.Claim{}, fmt.Errorf("idempotency: encode marker: %w", err)
	}
	// A record can vanish between SET NX and GET (released or expired); then claim again.
	// Three rounds only fail when other requests keep claiming and releasing the key.
	for range 3 {
		ok, err := s.rdb.SetNX(ctx, k, marker, s.LockTTL).Result()
		if err != nil {
			return idempotent.Claim{}, unavailable("claim key", err)
		}
		if ok {
			return idempotent.Claim{Lock: idempotent.Lock{Key: k, Hash: hash, Marker: string(marker)}}, nil
		}
		val, err := s.rdb.Get(ctx, k).Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return idempotent.Claim{}, unavailable("read key", err)
		}
		var rec record
		if err := json.Unmarshal(val, &rec); err != nil {
			return idempotent.Claim{}, fmt.Errorf("idempotency: decode stored record: %w", err)
		}
		switch {
		case rec.Hash != hash:
			return idempotent.Claim{}, otp.ErrIdempotencyKeyReused
		case rec.State == stateDone:
			body, err := s.open(rec)
			if err != nil {
				return idempotent.Claim{}, err
			}
			return idempotent.Claim{Replay: &idempotent.Response{Status: rec.Status, Header: rec.Header, Body: body}}, nil
		default:
			return idempotent.Claim{}, otp.ErrIdempotencyInFlight
		}
	}
	return idempotent.Claim{}, otp.ErrIdempotencyInFlight
}

// Complete stores the response of the request that holds l, replacing its in-flight
// marker, for the store's TTL. Errors: ErrLockLost when the marker is no longer ours
// (nothing is stored then), errors wrapping otp.ErrUnavailable when Redis fails.
func (s *Store) Complete(ctx context.Context, l idempotent.Lock, r idempotent.Response) error {
	ctx, cancel := otp.Bounded(ctx, s.Timeout)
	defer cancel()
	rec := record{State: stateDone, Hash: l.Hash, Status: r.Status, Header: r.Header, Body: r.Body}
	if s.Sealer != nil && len(r.Body) > 0 {
		rec.Body, rec.Sealed = nil, s.Sealer.Seal(string(r.Body))
	}
	done, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("idempotency: encode response: %w", err)
	}
	n, err := s.complete.Run(ctx, s.rdb, []string{l.Key}, l.Marker, done, s.ttl.Milliseconds()).Int()
	if err != nil {
		return unavailable("store response", err)
	}
	if n == 0 {
		return ErrLockLost
	}
	return nil
}

// Release gives the key up so that a retry is evaluated afresh. A marker that is no
// longer ours is left alone. Errors wrap otp.ErrUnavailable when Redis fails.
func (s *Store) Release(ctx context.Context, l idempotent.Lock) error {
	ctx, cancel := otp.Bounded(ctx, s.Timeout)
	defer cancel()
	if err := s.release.Run(ctx, s.rdb, []string{l.Key}, l.Marker).Err(); err != nil {
		return unavailable("release key", err)
	}
	return nil
}

// open is the body of a stored response, opened when it was sealed.
func (s *Store) open(rec record) ([]byte, error) {
	if rec.Sealed == "" {
		return rec.Body, nil
	}
	if s.Sealer == nil {
		return nil, errors.New("idempotency: a stored response is sealed and no sealer is configured")
	}
	body, err := s.Sealer.Open(rec.Sealed)
	if err != nil {
		return nil, fmt.Errorf("idempotency: open stored response: %w", err)
	}
	return []byte(body), nil
}

// Forget deletes every stored response whose body names address (as a JSON string, as
// the APIs write it) and returns how many it deleted: an erasure's part of Redis. Keys
// are client-chosen and hashed, so the records are found by SCAN over the store's prefix,
// on every master of a cluster; erasures are rare, and a store holds a day of requests.
func (s *Store) Forget(ctx context.Context, address string) (int, error) {
	quoted, err := json.Marshal(address)
	if err != nil {
		return 0, fmt.Errorf("idempotency: forget: %w", err)
	}
	var mu sync.Mutex
	var n int
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, s.prefix+"*", 500).Iterator()
		for iter.Next(ctx) {
			key := iter.Val()
			val, err := c.Get(ctx, key).Bytes()
			if errors.Is(err, redis.Nil) {
				continue
			}
			if err != nil {
				return err
			}
			var rec record
			if json.Unmarshal(val, &rec) != nil || rec.State != stateDone {
				continue
			}
			body, err := s.open(rec)
			if err != nil || !bytes.Contains(body, quoted) {
				continue
			}
			if err := c.Del(ctx, key).Err(); err != nil {
				return err
			}
			mu.Lock()
			n++
			mu.Unlock()
		}
		return iter.Err()
	}
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	} else {
		err = scan(ctx, s.rdb)
	}
	if err != nil {
		return n, unavailable("forget", err)
	}
	return n, nil
}

// redisKey hashes endpoint and key, so that any client-chosen key makes a short, safe name.
func (s *Store) redisKey(endpoint, key string) string {
	sum := sha256.Sum256([]byte(endpoint + "\x00" + key))
	return s.prefix + hex.EncodeToString(sum[:])
}

// unavailable marks a Redis failure as the domain's unavailability.
func unavailable(op string, err error) error {
	return fmt.Errorf("idempotency: %s: %w: %w", op, otp.ErrUnavailable, err)
}

var _ idempotent.Store = (*Store)(nil)
