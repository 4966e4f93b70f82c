package inmem_test

import (
	"testing"

	"otpgate/internal/inmem"
	"otpgate/internal/tokens"
	"otpgate/internal/tokens/tokenstest"
)

func TestTokensStore(t *testing.T) {
	tokenstest.Run(t, func(t *testing.T) tokens.Store { return inmem.New() })
}
