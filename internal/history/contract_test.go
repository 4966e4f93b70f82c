package history_test

import (
	"testing"

	"otpgate/internal/history/historytest"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestContract runs the store contract that history owns over both stores.
func TestContract(t *testing.T) { stores.Each(t, historytest.Run) }
