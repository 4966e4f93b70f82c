package events_test

import (
	"testing"

	"otpgate/internal/events/eventstest"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestContract runs the store contract that events owns over both stores.
func TestContract(t *testing.T) { stores.Each(t, eventstest.Run) }
