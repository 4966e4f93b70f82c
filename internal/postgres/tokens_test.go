package postgres_test

import (
	"testing"

	"otpgate/internal/postgres"
	"otpgate/internal/testenv"
	"otpgate/internal/tokens"
	"otpgate/internal/tokens/tokenstest"
)

func TestTokensStore(t *testing.T) {
	tokenstest.Run(t, func(t *testing.T) tokens.Store { return postgres.New(mustOpen(t), testenv.DataKeys()) })
}
