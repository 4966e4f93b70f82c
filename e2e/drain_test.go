package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv"
)

// TestSIGTERMDrain sends SIGTERM to one of two server processes while it holds sends in
// flight (the provider answers after 300ms): every request it accepted gets a complete,
// valid answer, it exits 0 within OTP_SHUTDOWN_TIMEOUT, every 201 has its sent row, and
// the refused sends its history writer still held are written. The other process serves
// on undisturbed. Nothing balances load here, so the servers close without a drain delay.
func TestSIGTERMDrain(t *testing.T) {
	const shutdownTimeout = 10 * time.Second
	p := newProvider(t)
	p.Set(smstest.Reply{Delay: 300 * time.Millisecond})
	dsn := testenv.PostgresDSN(t)
	servers := startServers(t, 2, prodEnv(t, testenv.RedisURL(t), dsn, p, map[string]string{
		"OTP_SHUTDOWN_TIMEOUT": shutdownTimeout.String(),
		"OTP_LOG_LEVEL":        "info", // the access log tells which requests a server took
	}))
	victim, other := servers[0], servers[1]
	// Without keep-alive, each request has its own connection: a refused connection is then
	// never mistaken for a dropped request.
	client := newClient(t, false)

	// Per phone: a send from one client, a repeat from it (409) and one from another client
	// (429), in whatever order they arrive; so a quarter of the requests wait on the
	// provider and the rest are refused and queued for the history writer.
	mix := func(srv *server, net string, base int) func(i int) call {
		return func(i int) call {
			k := base + i/3
			ip := fmt.Sprintf("%s.%d.%d", net, k/200%250, 1+k%200)
			if i%3 == 2 {
				ip = fmt.Sprintf("%s.%d.%d", net, 250+k%5, 1+k%200)
			}
			return call{srv: srv, phone: phone(k), ip: ip, reqID: fmt.Sprintf("%s-%d", srv.name, i)}
		}
	}
	conc := 40
	if soak() {
		conc = 120
	}
	victimLoad := startLoad(client, conc, mix(victim, "10.50", 0))
	otherLoad := startLoad(client, 8, mix(other, "10.60", 5_000_000))
	defer victimLoad.finish()
	defer otherLoad.finish()

	waitSent(t, victimLoad, time.Time{}, 20)
	if !waitUntil(10*time.Second, func() bool { return p.InFlight() >= 10 }) {
		t.Fatalf("fewer than 10 sends in flight at the provider")
	}
	inflight := p.InFlight()
	victim.Term()
	termAt := time.Now()
	// Keep knocking until the victim refuses connections, then a little longer.
	if !waitUntil(shutdownTimeout, func() bool {
		for _, o := range victimLoad.outcomes() {
			if errors.Is(o.err, syscall.ECONNREFUSED) {
				return true
			}
		}
		return false
	}) {
		t.Errorf("the victim still accepted connections %v after SIGTERM", shutdownTimeout)
	}
	time.Sleep(200 * time.Millisecond)
	outs := victimLoad.finish()
	exitErr := victim.Wait(shutdownTimeout + 5*time.Second)
	exitAfter := victim.ExitAt().Sub(termAt)
	otherOuts := otherLoad.finish()

	t.Run("ExitsZeroWithinShutdownTimeout", func(t *testing.T) {
		if exitErr != nil {
			t.Fatalf("%s: %v\n%s", victim.name, exitErr, victim.logTail(20))
		}
		t.Logf("exited 0 %v after SIGTERM, with %d sends in flight at the provider", exitAfter.Round(time.Millisecond), inflight)
		if exitAfter > shutdownTimeout {
			t.Errorf("exited %v after SIGTERM, want within OTP_SHUTDOWN_TIMEOUT %v", exitAfter, shutdownTimeout)
		}
	})

	var answered, refused, unaccepted, drained int
	t.Run("EveryAcceptedRequestIsAnswered", func(t *testing.T) {
		log := victim.log()
		for _, o := range outs {
			switch {
			case o.err == nil && o.invalid != "":
				t.Errorf("%s: incomplete or invalid answer: %s", o.reqID, o.invalid)
			case o.err == nil:
				answered++
				if o.start.Before(termAt) && o.end.After(termAt) {
					drained++
				}
				if o.status != http.StatusCreated && o.status != http.StatusConflict && o.status != http.StatusTooManyRequests {
					t.Errorf("%s: got %d %s, want 201, 409 or 429", o.reqID, o.status, o.code)
				}
			case errors.Is(o.err, syscall.ECONNREFUSED):
				refused++ // the listener was closed: a new connection, never accepted
			case o.gotHeaders:
				t.Errorf("%s: answer cut short: %v", o.reqID, o.err)
			case strings.Contains(log, `"request_id":"`+o.reqID+`"`):
				t.Errorf("%s: the server handled it, but the client got %v", o.reqID, o.err)
			default:
				// The connection was still in the kernel's accept queue when the listener
				// closed: the server never saw it, as with a refused one.
				unaccepted++
			}
		}
		t.Logf("victim: %d answered (%d of them in flight at SIGTERM and answered after it), %d connections refused, %d reset before accept; %s",
			answered, drained, refused, unaccepted, statuses(outs))
		if drained < 5 {
			t.Errorf("got %d requests answered across SIGTERM, want at least 5 for the test to mean anything", drained)
		}
	})
	t.Run("OtherServerServesOn", func(t *testing.T) {
		for _, o := range otherOuts {
			if o.err != nil || o.invalid != "" {
				t.Fatalf("%s: got err %v, invalid %q", o.reqID, o.err, o.invalid)
			}
		}
		t.Logf("other server: %s", statuses(otherOuts))
	})
	t.Run("Every201HasASentRow", func(t *testing.T) {
		var created []string
		for _, o := range append(outs, otherOuts...) {
			if o.err == nil && o.status == http.StatusCreated {
				created = append(created, o.id)
			}
		}
		rows := sentRowsOf(t, dsn, created) // the other server still runs
		for _, o := range append(outs, otherOuts...) {
			if o.err == nil && o.status == http.StatusCreated && !rows[o.id] {
				t.Errorf("%s: 201 for verification %s has no sent row", o.reqID, o.id)
			}
		}
	})
	t.Run("RefusedSendsAreFlushed", func(t *testing.T) {
		want := map[string]int{}
		for _, o := range outs {
			switch {
			case o.err != nil:
			case o.status == http.StatusConflict:
				want["duplicate"]++
			case o.status == http.StatusTooManyRequests:
				want["blocked"]++
			}
		}
		got := map[string]int{}
		query(t, dsn, `SELECT status, count(*) FROM sends WHERE client_ip LIKE '10.50.%' AND status IN ('duplicate', 'blocked') GROUP BY 1`, func(r pgx.Rows) error {
			var s string
			var n int
			err := r.Scan(&s, &n)
			got[s] = n
			return err
		})
		for _, s := range []string{"duplicate", "blocked"} {
			if got[s] != want[s] {
				t.Errorf("got %d %s rows from the victim's clients, want %d (its %s answers)", got[s], s, want[s], map[string]string{"duplicate": "409", "blocked": "429"}[s])
			}
		}
	})
}

// TestSecondSignalEndsDrainDelay sends SIGTERM to a server with a long OTP_DRAIN_DELAY:
// /readyz fails on both listeners while a send still gets its 201; a second SIGTERM ends
// the delay, and the process exits 0 long before the delay would have.
func TestSecondSignalEndsDrainDelay(t *testing.T) {
	const delay = 10 * time.Minute
	p := newProvider(t)
	s := startServer(t, prodEnv(t, testenv.RedisURL(t), testenv.PostgresDSN(t), p, map[string]string{
		"OTP_DRAIN_DELAY": delay.String(),
	}))
	s.Term()
	if !waitUntil(30*time.Second, func() bool { return getStatus(s.API+"/readyz") == http.StatusServiceUnavailable }) {
		t.Fatalf("/readyz on the api listener: not 503 within 30s of SIGTERM\n%s", s.logTail(20))
	}
	if got := getStatus(s.Admin + "/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz on the admin listener during the delay: got %d, want 503", got)
	}
	o := doSend(t.Context(), newClient(t, false), call{srv: s, phone: phone(7_000_001), ip: "10.70.0.1"})
	if o.err != nil || o.invalid != "" || o.status != http.StatusCreated {
		t.Errorf("send during the delay: got %d %s (err %v, invalid %q), want 201", o.status, o.code, o.err, o.invalid)
	}
	s.Term()
	if err := s.Wait(30 * time.Second); err != nil {
		t.Fatalf("after the second SIGTERM: %v, want exit 0 before the %v delay is over\n%s", err, delay, s.logTail(20))
	}
}
