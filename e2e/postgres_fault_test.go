package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"otpgate/internal/testenv"
)

// TestPostgresOutage runs a steady load of sends against two server processes while their
// private PostgreSQL is shut down at once (as a crash would) and started again: sends made
// while it is down fail closed with 503 and send no SMS, /readyz fails, their limiter
// reservations are refunded, and the servers recover without a restart.
func TestPostgresOutage(t *testing.T) {
	const dbTimeout = time.Second
	pg := testenv.StartPostgres(t)
	p := newProvider(t)
	env := prodEnv(t, testenv.RedisURL(t), pg.DSN("postgres"), p, map[string]string{
		"OTP_DB_TIMEOUT": dbTimeout.String(),
	})
	servers := startServers(t, 2, env)
	client := newClient(t, true)
	conc := 16
	if soak() {
		conc = 64
	}
	ipOf := func(i int) string { return fmt.Sprintf("10.99.%d.%d", i%50, 1+i%200) }
	load := startLoad(client, conc, func(i int) call {
		return call{srv: servers[i%len(servers)], phone: phone(i), ip: ipOf(i)}
	})
	defer load.finish()
	waitSent(t, load, time.Time{}, 20)

	pg.Stop()
	stoppedFrom := time.Now()
	time.Sleep(2*dbTimeout + time.Second)
	ready := [2]int{getStatus(servers[0].API + "/readyz"), getStatus(servers[1].Admin + "/readyz")}
	stoppedTo := time.Now()
	pg.Start()
	restarted := time.Now()
	recovered := waitSent(t, load, restarted, 5)
	t.Logf("recovered %v after Postgres was back", recovered.Sub(restarted).Round(time.Millisecond))
	outs := load.finish()
	t.Logf("all sends: %s", statuses(outs))

	// Requests that started while Postgres was down and had their whole timeout to fail.
	var down []outcome
	for _, o := range outs {
		if !o.start.Before(stoppedFrom) && o.start.Before(stoppedTo.Add(-dbTimeout-latencyMargin)) {
			down = append(down, o)
		}
	}
	t.Run("FailsClosed", func(t *testing.T) {
		checkFailedClosed(t, p, down)
		t.Logf("503 latency seen by the client: %v (OTP_DB_TIMEOUT %v)", latencies(down), dbTimeout)
		if ready != [2]int{http.StatusServiceUnavailable, http.StatusServiceUnavailable} {
			t.Errorf("/readyz (api, admin) during the outage: got %v, want 503 from both", ready)
		}
	})
	t.Run("NoSMSWithoutA201", func(t *testing.T) { checkSMSMatch201(t, p, outs) })
	t.Run("RefusedSendsWereRefunded", func(t *testing.T) {
		// The same client asking again for the same phone passes the phone rule (1/1m) and
		// the duplicate window only if the failed send gave its reservation back.
		for _, o := range down[:min(5, len(down))] {
			again := doSend(t.Context(), client, o.call)
			if again.status != http.StatusCreated {
				t.Errorf("%s again after the outage: got %d %s (err %v), want 201", o.phone, again.status, again.code, again.err)
			}
		}
	})
	for _, s := range servers {
		if got := getStatus(s.API + "/readyz"); got != http.StatusOK {
			t.Errorf("%s: /readyz after recovery: got %d, want 200", s.name, got)
		}
	}
}
