package tracing_test

import (
	"testing"

	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
	"otpgate/internal/tracing/tracingtest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestContract runs the store contract that tracing owns over both stores.
func TestContract(t *testing.T) { stores.Each(t, tracingtest.Run) }
