package tokens_test

import (
	"testing"

	"otpgate/internal/storetest/fixture"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
	"otpgate/internal/tokens"
	"otpgate/internal/tokens/tokenstest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestContract runs the store contract that tokens owns over both stores.
func TestContract(t *testing.T) {
	stores.Each(t, func(t *testing.T, open func(t *testing.T) fixture.Subject) {
		tokenstest.Run(t, func(t *testing.T) tokens.Store { return open(t).Store })
	})
}
