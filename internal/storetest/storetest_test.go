package storetest_test

import (
	"testing"

	"otpgate/internal/storetest"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestContract runs the kernel's store contract over both stores.
func TestContract(t *testing.T) { stores.Each(t, storetest.Run) }
