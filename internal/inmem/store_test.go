package inmem_test

import (
	"context"
	"testing"
	"time"

	"otpgate/internal/inmem"
	"otpgate/internal/storetest"
)

// TestStore runs the behaviour suite on the dev store, which settles no sends and keeps no
// retention: those cases are skipped, each naming what the store lacks.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Subject {
		s := inmem.New()
		return storetest.Subject{
			Store: s, Denied: s,
			Flush:    func(context.Context) error { return nil },
			SetClock: func(now func() time.Time) { s.Now = now },
		}
	})
}
