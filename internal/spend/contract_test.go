package spend_test

import (
	"testing"

	"otpgate/internal/spend/spendtest"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestContract runs the store contract that spend owns over both stores.
func TestContract(t *testing.T) { stores.Each(t, spendtest.Run) }
