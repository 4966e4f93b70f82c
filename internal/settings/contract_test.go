package settings_test

import (
	"testing"

	"otpgate/internal/settings/settingstest"
	"otpgate/internal/storetest/stores"
)

// TestContract runs the store contract that settings owns over both stores.
func TestContract(t *testing.T) { stores.Each(t, settingstest.Run) }
