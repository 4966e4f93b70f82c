package server

import (
	"net/http"
	"testing"
	"time"
)

func TestConfigDrainDelay(t *testing.T) {
	load := func(value string) (time.Duration, error) {
		cfg, err := loadConfig(func(k string) string {
			if k == "OTP_DRAIN_DELAY" {
				return value
			}
			return ""
		})
		return cfg.DrainDelay, err
	}
	t.Run("DefaultZeroAndDurationsAreTaken", func(t *testing.T) {
		for value, want := range map[string]time.Duration{"": 5 * time.Second, "0": 0, "750ms": 750 * time.Millisecond} {
			if got, err := load(value); err != nil || got != want {
				t.Errorf("OTP_DRAIN_DELAY=%q: got %v, %v, want %v", value, got, err, want)
			}
		}
	})
	t.Run("NegativeIsRefused", func(t *testing.T) {
		const want = "config: OTP_DRAIN_DELAY=-1s: must be 0 or more"
		if _, err := load("-1s"); err == nil || err.Error() != want {
			t.Errorf("got %v, want %v", err, want)
		}
	})
}

// TestDrainDelay ends the server's context, as SIGTERM does: /readyz fails on both
// listeners at once, yet for OTP_DRAIN_DELAY the server serves on, so a send made then
// gets its 201 and its SMS; then it stops cleanly.
func TestDrainDelay(t *testing.T) {
	// The test waits it out. Its requests need only be accepted within it, not answered:
	// what was accepted finishes after it, and a second is ample for that on a busy machine.
	const delay = time.Second
	p := newProvider(t)
	in := startServer(t, prodEnv(t, p, map[string]string{"OTP_DRAIN_DELAY": delay.String()}))
	if got := readyz(in.api); got != http.StatusOK {
		t.Fatalf("/readyz before the stop: got %d, want 200", got)
	}

	stoppedAt := time.Now()
	in.cancel()
	// Readiness fails as soon as serve sees the stop; poll for that moment.
	for readyz(in.api) != http.StatusServiceUnavailable {
		if time.Since(stoppedAt) > delay {
			t.Fatalf("/readyz on the api listener still not 503 %v after the stop", delay)
		}
		time.Sleep(5 * time.Millisecond)
	}

	t.Run("ReadyzFailsOnBothListeners", func(t *testing.T) {
		if got := readyz(in.admin); got != http.StatusServiceUnavailable {
			t.Errorf("/readyz on the admin listener: got %d, want 503", got)
		}
	})
	t.Run("SendIsServedAsUsual", func(t *testing.T) {
		phone := newPhone()
		wantStatus(t, send(t, in, phone), http.StatusCreated, "")
		lastCode(t, p, phone)
	})
	t.Run("StopsCleanlyAfterTheDelay", func(t *testing.T) {
		if err := in.wait(30 * time.Second); err != nil {
			t.Fatalf("got %v, want a clean stop\nstderr:\n%s", err, in.stderr.String())
		}
		// A lower bound only: the server must not have cut the delay short.
		if took := time.Since(stoppedAt); took < delay {
			t.Errorf("stopped %v after the stop, want no sooner than OTP_DRAIN_DELAY %v", took, delay)
		}
	})
}

// readyz GETs /readyz of base and returns the status code, or 0 when the request failed.
func readyz(base string) int {
	resp, err := client.Get(base + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
