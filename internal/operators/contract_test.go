package operators_test

import (
	"testing"

	"otpgate/internal/operators/operatorstest"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestContract runs the store contract that operators owns over both stores.
func TestContract(t *testing.T) { stores.Each(t, operatorstest.Run) }
