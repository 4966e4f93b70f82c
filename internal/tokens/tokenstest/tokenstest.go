// Package tokenstest is the behaviour every tokens.Store shares; the tokens package's
// TestContract runs it over both stores.
package tokenstest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"otpgate/internal/tokens"
)

// Run runs the contract against stores newStore makes, a fresh one per case.
func Run(t *testing.T, newStore func(t *testing.T) tokens.Store) {
	ctx := context.Background()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	key := func(id string, created time.Time) tokens.StoredKey {
		return tokens.StoredKey{ID: id, Alg: tokens.AlgES256, Sealed: []byte("sealed " + id), CreatedAt: created, ActiveAt: created.Add(10 * time.Minute)}
	}

	t.Run("SigningKeysAreKeptOldestFirst", func(t *testing.T) {
		s := newStore(t)
		for _, k := range []tokens.StoredKey{key("a", at), key("b", at.Add(time.Hour))} {
			if added, err := s.AddSigningKey(ctx, k, k.CreatedAt.Add(-time.Minute)); err != nil || !added {
				t.Fatalf("AddSigningKey(%s): got %v, %v; want added", k.ID, added, err)
			}
		}
		got, err := s.SigningKeys(ctx)
		want := []tokens.StoredKey{key("a", at), key("b", at.Add(time.Hour))}
		if err != nil || !slices.EqualFunc(got, want, equalKey) {
			t.Fatalf("SigningKeys: got %+v, %v; want %+v", got, err, want)
		}
		if err := s.DeleteSigningKeys(ctx, []string{"a", "unknown"}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.SigningKeys(ctx); err != nil || len(got) != 1 || got[0].ID != "b" {
			t.Fatalf("after deleting a: got %+v, %v; want b alone", got, err)
		}
	})

	t.Run("AKeyIsAddedOnlyWhenTheNewestIsStale", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.AddSigningKey(ctx, key("a", at), at.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		// a was made after the stale mark: another instance rotated first.
		if added, err := s.AddSigningKey(ctx, key("b", at.Add(time.Minute)), at.Add(-time.Second)); err != nil || added {
			t.Fatalf("AddSigningKey with a fresh key stored: got %v, %v; want not added", added, err)
		}
		if added, err := s.AddSigningKey(ctx, key("c", at.Add(time.Hour)), at); err != nil || !added {
			t.Fatalf("AddSigningKey with the newest key stale: got %v, %v; want added", added, err)
		}
	})

	t.Run("ConcurrentRotationsAddOneKey", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		added := 0
		for i := range 8 {
			wg.Go(func() {
				ok, err := s.AddSigningKey(ctx, key(string(rune('a'+i)), at), at.Add(-time.Hour))
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if ok {
					added++
				}
			})
		}
		wg.Wait()
		if keys, err := s.SigningKeys(ctx); added != 1 || err != nil || len(keys) != 1 {
			t.Fatalf("got %d added and %d stored (%v); want one of each", added, len(keys), err)
		}
	})

	t.Run("ATokenIsRedeemedOnce", func(t *testing.T) {
		s := newStore(t)
		r := tokens.Redemption{JTI: "0b6a3c1e-3f5d-4a6e-9b1f-2d4c6e8a0b1c", AppID: "00000000-0000-0000-0000-000000000001", ExpiresAt: at.Add(10 * time.Minute), RedeemedAt: at}
		if err := s.Redeem(ctx, r); err != nil {
			t.Fatalf("first Redeem: %v", err)
		}
		r.RedeemedAt = at.Add(time.Minute)
		if err := s.Redeem(ctx, r); !errors.Is(err, tokens.ErrRedeemed) {
			t.Fatalf("second Redeem: got %v, want ErrRedeemed", err)
		}
	})

	t.Run("ConcurrentRedeemsOneWins", func(t *testing.T) {
		s := newStore(t)
		r := tokens.Redemption{JTI: "5f0c2a8e-1b3d-4c5e-8f7a-9b0c1d2e3f40", AppID: "00000000-0000-0000-0000-000000000001", ExpiresAt: at.Add(10 * time.Minute), RedeemedAt: at}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won, refused := 0, 0
		for range 8 {
			wg.Go(func() {
				err := s.Redeem(ctx, r)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, tokens.ErrRedeemed):
					refused++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if won != 1 || refused != 7 {
			t.Fatalf("got %d redeemed and %d refused, want 1 and 7", won, refused)
		}
	})
}

func equalKey(a, b tokens.StoredKey) bool {
	return a.ID == b.ID && a.Alg == b.Alg && string(a.Sealed) == string(b.Sealed) && a.CreatedAt.Equal(b.CreatedAt) && a.ActiveAt.Equal(b.ActiveAt)
}
