package fraud_test

import (
	"testing"

	"otpgate/internal/fraud/fraudtest"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestContract runs the store contract that fraud owns over both stores.
func TestContract(t *testing.T) { stores.Each(t, fraudtest.Run) }
