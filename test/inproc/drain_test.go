package inproc

import (
	"net/http"
	"testing"
	"time"

	"otpgate/internal/server/servertest"
)

// TestDrainDelay ends the server's context, as SIGTERM does: /readyz fails on both
// listeners at once, yet for OTP_DRAIN_DELAY the server serves on, so a send made then
// gets its 201 and its SMS; then it stops cleanly.
func TestDrainDelay(t *testing.T) {
	// The test waits it out. Its requests need only be accepted within it, not answered:
	// what was accepted finishes after it, and a second is ample for that on a busy machine.
	const delay = time.Second
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{"OTP_DRAIN_DELAY": delay.String()}))
	if got := readyz(in.API); got != http.StatusOK {
		t.Fatalf("/readyz before the stop: got %d, want 200", got)
	}

	stoppedAt := time.Now()
	in.Cancel()
	// Readiness fails as soon as serve sees the stop; poll for that moment.
	for readyz(in.API) != http.StatusServiceUnavailable {
		if time.Since(stoppedAt) > delay {
			t.Fatalf("/readyz on the api listener still not 503 %v after the stop", delay)
		}
		time.Sleep(5 * time.Millisecond)
	}

	t.Run("ReadyzFailsOnBothListeners", func(t *testing.T) {
		if got := readyz(in.Admin); got != http.StatusServiceUnavailable {
			t.Errorf("/readyz on the admin listener: got %d, want 503", got)
		}
	})
	t.Run("SendIsServedAsUsual", func(t *testing.T) {
		phone := servertest.NewPhone()
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
		servertest.LastCode(t, p, phone)
	})
	t.Run("StopsCleanlyAfterTheDelay", func(t *testing.T) {
		if err := in.Wait(30 * time.Second); err != nil {
			t.Fatalf("got %v, want a clean stop\nstderr:\n%s", err, in.Stderr.String())
		}
		// A lower bound only: the server must not have cut the delay short.
		if took := time.Since(stoppedAt); took < delay {
			t.Errorf("stopped %v after the stop, want no sooner than OTP_DRAIN_DELAY %v", took, delay)
		}
	})
}

// readyz GETs /readyz of base and returns the status code, or 0 when the request failed.
func readyz(base string) int {
	resp, err := servertest.Client.Get(base + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
