package postgres_test

import (
	"log/slog"
	"testing"

	"otpgate/internal/testenv"
)

// The store contracts run from the packages that own them (internal/storetest/stores);
// the tests here are of what only PostgreSQL does: batches, partitions, retention, plans.

func TestMain(m *testing.M) { testenv.Main(m) }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
