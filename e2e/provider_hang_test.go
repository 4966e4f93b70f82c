package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv"
)

// TestProviderHangs sends waves of concurrent sends to a server whose SMS provider never
// answers: each send fails with 502 once SMS_TIMEOUT has passed, and after each wave the
// server's goroutines and open file descriptors return to where they were before the
// first, instead of growing with the waves.
func TestProviderHangs(t *testing.T) {
	const smsTimeout = 500 * time.Millisecond
	perWave, waves := 50, 3
	if soak() {
		perWave, waves = 200, 10
	}
	p := newProvider(t)
	s := startServer(t, prodEnv(t, testenv.RedisURL(t), testenv.PostgresDSN(t), p, map[string]string{
		"SMS_TIMEOUT":   smsTimeout.String(),
		"OTP_LOG_LEVEL": "info", // the access log tells how long each request took inside
	}))
	client := newClient(t, true)
	wave := func(w int) []outcome {
		calls := make([]call, perWave)
		for i := range calls {
			n := w*perWave + i
			calls[i] = call{srv: s, phone: phone(n), ip: fmt.Sprintf("10.66.%d.%d", n/200, 1+n%200), reqID: fmt.Sprintf("hang-%d", n)}
		}
		outs := runCalls(client, calls, perWave)
		client.CloseIdleConnections()
		return outs
	}
	// A first wave with a provider that answers brings every pool to its working size. On a
	// busy machine the provider may answer a few of them after SMS_TIMEOUT: 502, as it should.
	for _, o := range wave(0) {
		if o.err != nil || o.invalid != "" || (o.status != http.StatusCreated && o.status != http.StatusBadGateway) {
			t.Fatalf("warm-up wave: got %d %s (err %v, invalid %q), want 201 or 502", o.status, o.code, o.err, o.invalid)
		}
	}
	baseG, baseFD := settle(t, s, 0, 0)
	t.Logf("baseline after a wave of %d answered sends: %d goroutines, %d open fds", perWave, baseG, baseFD)

	// What a wave may leave behind: the odd connection still closing, a timer.
	const slack = 10
	p.Set(smstest.Reply{Hang: true})
	for w := 1; w <= waves; w++ {
		peak := peakGoroutines(t, s)
		outs := wave(w)
		peakG := peak()
		took := accessLog(t, s)
		var inside []time.Duration
		var bad []string
		for _, o := range outs {
			d, logged := took[o.reqID]
			inside = append(inside, d)
			switch {
			case o.err != nil || o.status != http.StatusBadGateway || o.code != "provider_error":
				bad = append(bad, fmt.Sprintf("%d %s %v", o.status, o.code, o.err))
			case !logged:
				bad = append(bad, o.reqID+" not in the access log")
			case d < smsTimeout:
				bad = append(bad, fmt.Sprintf("502 after %v, before SMS_TIMEOUT", d))
			}
		}
		if len(bad) > 0 {
			t.Errorf("wave %d: got %d answers other than 502 provider_error after SMS_TIMEOUT, such as %v", w, len(bad), bad[0])
		}
		// SMS_TIMEOUT bounds the provider call; before it, the sends of a wave queue for the
		// store's few connections. The bound only tells a wait from a hang.
		d := distOf(inside)
		if d.p99 > smsTimeout+1500*time.Millisecond {
			t.Errorf("wave %d: p99 of the 502s inside the server: got %v, want at most SMS_TIMEOUT %v + 1.5s", w, d.p99, smsTimeout)
		}
		g, fd := settle(t, s, baseG+slack, baseFD+slack)
		t.Logf("wave %d of %d hanging sends: 502 latency inside the server %v, seen by the client %v; peak %d goroutines; after: %d goroutines, %d fds",
			w, perWave, d, latencies(outs), peakG, g, fd)
		if g > baseG+slack || fd > baseFD+slack {
			t.Errorf("after wave %d: got %d goroutines and %d fds, want at most %d and %d (baseline + %d)", w, g, fd, baseG+slack, baseFD+slack, slack)
		}
	}
	if got := len(p.Received("")); got != (waves+1)*perWave {
		t.Errorf("provider received %d messages, want %d", got, (waves+1)*perWave)
	}
}

// settle waits up to 10s for the server's goroutines and fds to fall to at most the given
// counts, and returns them; with zero counts it waits until they stop falling.
func settle(t *testing.T, s *server, maxG, maxFD int) (int, int) {
	t.Helper()
	g, fd := int(s.metric(t, "go_goroutines")), s.fds(t)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if maxG > 0 && g <= maxG && fd <= maxFD {
			break
		}
		time.Sleep(200 * time.Millisecond)
		g2, fd2 := int(s.metric(t, "go_goroutines")), s.fds(t)
		if maxG == 0 && g2 >= g && fd2 >= fd {
			break
		}
		g, fd = g2, fd2
	}
	return g, fd
}

// peakGoroutines samples the server's goroutines until the returned function is called,
// which returns the highest count seen.
func peakGoroutines(t *testing.T, s *server) func() int {
	stop, done := make(chan struct{}), make(chan int)
	go func() {
		peak := 0
		for {
			if g := int(s.metricOr(-1, "go_goroutines")); g > peak {
				peak = g
			}
			select {
			case <-stop:
				done <- peak
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() int { close(stop); return <-done }
}
