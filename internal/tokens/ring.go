package tokens

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"

	"otpgate/internal/otp"
)

// Timing of generated keys.
const (
	// PublishLead is how long a new key is published before it signs: longer than the
	// poll of every instance and than the JWKS's cache time, so that no backend meets a
	// token whose key its cached key set lacks.
	PublishLead = 10 * time.Minute
	// RetireLeeway is how long a key stays published after the last token it signed
	// expired, for clocks that differ a little.
	RetireLeeway = time.Minute
	// DefaultPollInterval is how often Run reads the stored keys and rotates them.
	DefaultPollInterval = time.Minute
	// JWKSMaxAge is how long a client may cache the JWKS: well under PublishLead.
	JWKSMaxAge = 5 * time.Minute
)

// Ring holds the signing keys: the key that signs now and the keys published beside it
// (the next one before it signs, the previous ones until their tokens expired). A ring of
// OTP_TOKEN_KEYS is fixed; a generated ring rotates its keys in the store and reads them
// as an immutable snapshot that Maintain swaps.
type Ring struct {
	store    Store
	sealer   *Sealer
	alg      string
	rotation time.Duration
	log      *slog.Logger
	static   bool
	snap     atomic.Pointer[[]Key]
	mu       sync.Mutex

	// Now is the ring's clock; tests replace it.
	Now func() time.Time
	// PollInterval is how often Run maintains the keys; Timeout bounds one round.
	PollInterval time.Duration
	Timeout      time.Duration
}

// NewStaticRing returns the ring of OTP_TOKEN_KEYS: the first key signs, every key is
// published.
func NewStaticRing(keys []Key) (*Ring, error) {
	if len(keys) == 0 {
		return nil, errors.New("tokens: no keys")
	}
	r := &Ring{static: true, Now: utcNow}
	keys = slices.Clone(keys)
	r.snap.Store(&keys)
	return r, nil
}

// NewRing returns a ring that generates keys of alg, stores them sealed in store and
// makes a new one every rotation. Call Maintain before serving and Run to keep it current.
func NewRing(store Store, sealer *Sealer, alg string, rotation time.Duration, log *slog.Logger) (*Ring, error) {
	if _, err := NewKey(alg); err != nil {
		return nil, err
	}
	if rotation < PublishLead+otp.MaxTokenTTL {
		return nil, fmt.Errorf("tokens: rotation %s: must be at least %s", rotation, PublishLead+otp.MaxTokenTTL)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Ring{store: store, sealer: sealer, alg: alg, rotation: rotation, log: log, Now: utcNow, PollInterval: DefaultPollInterval, Timeout: 5 * time.Second}
	r.snap.Store(&[]Key{})
	return r, nil
}

func utcNow() time.Time { return time.Now().UTC() }

// signing is the key that signs at now: the newest active one (the first, of a fixed ring).
func (r *Ring) signing(now time.Time) (Key, bool) {
	keys := *r.snap.Load()
	if len(keys) == 0 {
		return Key{}, false
	}
	if r.static {
		return keys[0], true
	}
	k := keys[0]
	for _, c := range keys[1:] {
		if !c.ActiveAt.After(now) {
			k = c
		}
	}
	return k, true
}

// published are the keys whose tokens verify at now.
func (r *Ring) published(now time.Time) []Key {
	keys := *r.snap.Load()
	if r.static {
		return keys
	}
	out := make([]Key, 0, len(keys))
	for i, k := range keys {
		if i == len(keys)-1 || now.Before(retireAt(keys[i+1])) {
			out = append(out, k)
		}
	}
	return out
}

// retireAt is when the key before next stops being published: the last token it signed
// expired (the longest an app's tokens last), and a little more.
func retireAt(next Key) time.Time { return next.ActiveAt.Add(otp.MaxTokenTTL + RetireLeeway) }

// JWKS is the published keys as a JSON Web Key Set.
func (r *Ring) JWKS() ([]byte, error) {
	keys := r.published(r.Now())
	set := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, len(keys))}
	for i, k := range keys {
		set.Keys[i] = k.public()
	}
	return json.Marshal(set)
}

// Maintain reads the stored keys, makes a new one when the newest is older than the
// rotation (or there is none: the first signs at once, every later one after
// PublishLead), deletes the keys whose tokens all expired and swaps the snapshot. A fixed
// ring has nothing to maintain.
func (r *Ring) Maintain(ctx context.Context) error {
	if r.static {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.Now().Truncate(time.Microsecond)
	keys, err := r.load(ctx)
	if err != nil {
		return err
	}
	if len(keys) == 0 || !slices.MaxFunc(keys, byCreated).CreatedAt.After(now.Add(-r.rotation)) {
		k, err := NewKey(r.alg)
		if err != nil {
			return err
		}
		k.CreatedAt, k.ActiveAt = now, now
		if len(keys) > 0 {
			k.ActiveAt = now.Add(PublishLead)
		}
		sk, err := r.sealer.seal(k)
		if err != nil {
			return err
		}
		// Another instance may have rotated first: then its key is the one read back.
		if _, err := r.store.AddSigningKey(ctx, sk, now.Add(-r.rotation)); err != nil {
			return fmt.Errorf("tokens: add signing key: %w", err)
		}
		if keys, err = r.load(ctx); err != nil {
			return err
		}
	}
	var gone []string
	for i := 0; i+1 < len(keys); i++ {
		if !now.Before(retireAt(keys[i+1])) {
			gone = append(gone, keys[i].ID)
		}
	}
	if len(gone) > 0 {
		if err := r.store.DeleteSigningKeys(ctx, gone); err != nil {
			return fmt.Errorf("tokens: delete retired keys: %w", err)
		}
		keys = keys[len(gone):]
	}
	r.snap.Store(&keys)
	return nil
}

func byCreated(a, b Key) int { return a.CreatedAt.Compare(b.CreatedAt) }

// load reads the stored keys, in the order they sign. A key this OTP_SECRET cannot open
// is of no use to it: it is deleted, and a new one made in its place.
func (r *Ring) load(ctx context.Context) ([]Key, error) {
	stored, err := r.store.SigningKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("tokens: signing keys: %w", err)
	}
	var keys []Key
	var unreadable []string
	for _, sk := range stored {
		if k, ok := r.sealer.open(sk); ok {
			keys = append(keys, k)
		} else {
			unreadable = append(unreadable, sk.ID)
		}
	}
	if len(unreadable) > 0 {
		r.log.Warn("tokens: deleting signing keys this OTP_SECRET cannot open; tokens they signed no longer verify", "keys", unreadable)
		if err := r.store.DeleteSigningKeys(ctx, unreadable); err != nil {
			return nil, fmt.Errorf("tokens: delete unreadable keys: %w", err)
		}
	}
	slices.SortStableFunc(keys, func(a, b Key) int { return a.ActiveAt.Compare(b.ActiveAt) })
	return keys, nil
}

// Run maintains the keys every PollInterval until ctx ends; a failed round is logged and
// the next one tries again.
func (r *Ring) Run(ctx context.Context) error {
	if r.static {
		<-ctx.Done()
		return ctx.Err()
	}
	t := time.NewTicker(r.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			mctx, cancel := context.WithTimeout(ctx, r.Timeout)
			err := r.Maintain(mctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				r.log.Warn("tokens: maintaining the signing keys failed; the next round tries again", "err", err)
			}
		}
	}
}
