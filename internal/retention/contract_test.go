package retention_test

import (
	"testing"

	"otpgate/internal/retention/retentiontest"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestContract runs the store contract that retention owns over both stores.
func TestContract(t *testing.T) { stores.Each(t, retentiontest.Run) }
