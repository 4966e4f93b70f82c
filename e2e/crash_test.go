package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv"
)

// TestKilledServerLeavesSendUnknown kills a server (SIGKILL) after it wrote a send as
// sending and handed the SMS to the provider, before it could write the outcome: the
// provider holds the message unanswered. A server started afterwards settles the send as
// unknown once SMS_TIMEOUT + OTP_SWEEP_MARGIN have passed, and counts it.
func TestKilledServerLeavesSendUnknown(t *testing.T) {
	p := newProvider(t)
	p.Set(smstest.Reply{Hang: true})
	dsn := testenv.PostgresDSN(t)
	env := prodEnv(t, testenv.RedisURL(t), dsn, p, map[string]string{
		"SMS_TIMEOUT": "1s", "OTP_SWEEP_MARGIN": "1s", "OTP_SWEEP_INTERVAL": "200ms",
	})
	victim := startServer(t, env)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	sent := make(chan outcome, 1)
	go func() {
		sent <- doSend(ctx, newClient(t, false), call{srv: victim, phone: phone(7_300_000), ip: "10.73.0.1"})
	}()
	if !waitUntil(10*time.Second, func() bool { return len(p.Received(phone(7_300_000))) == 1 }) {
		t.Fatal("the provider never got the SMS")
	}
	if got := sendStatus(t, dsn, phone(7_300_000)); got != "sending" {
		t.Fatalf("before the kill: got send status %q, want sending: the row is written before the SMS goes out", got)
	}
	victim.Kill()
	if o := <-sent; o.err == nil {
		t.Errorf("got %d from the killed server, want the connection to fail", o.status)
	}

	after := startServer(t, env)
	if !waitUntil(15*time.Second, func() bool { return sendStatus(t, dsn, phone(7_300_000)) == "unknown" }) {
		t.Fatalf("got send status %q 15s after the restart, want unknown", sendStatus(t, dsn, phone(7_300_000)))
	}
	if n := after.metric(t, "otpgate_sweeper_settled_total"); n != 1 {
		t.Errorf("otpgate_sweeper_settled_total: got %v, want 1", n)
	}
	var errText string
	query(t, dsn, `SELECT error FROM sends WHERE phone = $1`, func(r pgx.Rows) error { return r.Scan(&errText) }, stored(t, phone(7_300_000)))
	if errText == "" {
		t.Errorf("got no error text on the unknown send, want why its outcome is unknown")
	}
}

// sendStatus is the status of the one send row of phone, or "" when there is none.
func sendStatus(t testing.TB, dsn, phone string) string {
	t.Helper()
	status := ""
	query(t, dsn, `SELECT status FROM sends WHERE phone = $1`, func(r pgx.Rows) error { return r.Scan(&status) }, stored(t, phone))
	return status
}
