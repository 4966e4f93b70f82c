package inmem_test

import (
	"context"
	"testing"
	"time"

	"otpgate/internal/inmem"
	"otpgate/internal/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		s := inmem.New()
		return storetest.Stores{
			Store: s, History: s, Denied: s, Receipts: s, Apps: s, Fraud: s, Lifecycle: s, Events: s,
			Flush:    func(context.Context) error { return nil },
			Settle:   s.SettleSends,
			SetClock: func(now func() time.Time) { s.Now = now },
		}
	})
}
