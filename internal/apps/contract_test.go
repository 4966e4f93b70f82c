package apps_test

import (
	"testing"

	"otpgate/internal/apps/appstest"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestContract runs the store contract that apps owns over both stores.
func TestContract(t *testing.T) { stores.Each(t, appstest.Run) }
