package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"otpgate/internal/postgres"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
	"otpgate/internal/tokens"
)

// TestTokenRingsShareOneKey starts instances' key rings at once over one database: they
// make one key between them, and all publish it.
func TestTokenRingsShareOneKey(t *testing.T) {
	store := postgres.New(stores.OpenPostgres(t), testenv.DataKeys())
	sealer, err := tokens.NewSealer([]byte("test secret"))
	if err != nil {
		t.Fatal(err)
	}
	rings := make([]*tokens.Ring, 4)
	var wg sync.WaitGroup
	for i := range rings {
		if rings[i], err = tokens.NewRing(store, sealer, tokens.AlgES256, 24*time.Hour, nil); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := rings[i].Maintain(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	keys, err := store.SigningKeys(context.Background())
	if err != nil || len(keys) != 1 {
		t.Fatalf("got %d stored keys (%v), want one", len(keys), err)
	}
	first, _ := rings[0].JWKS()
	for i, r := range rings[1:] {
		if got, _ := r.JWKS(); string(got) != string(first) {
			t.Errorf("ring %d publishes %s, ring 0 %s", i+1, got, first)
		}
	}
}
