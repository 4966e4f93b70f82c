package inproc

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"otpgate/internal/server/servertest"
	"otpgate/internal/sms/smstest"
)

// sendsOf returns a verification's sends from the admin API once none is still
// sending, as history shows them (outcomes are written in batches).
func sendsOf(t *testing.T, in *servertest.Instance, verificationID string) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/verifications/"+verificationID, nil)
		servertest.WantStatus(t, r, http.StatusOK, "")
		raw, _ := r.Body["sends"].([]any)
		var out []map[string]any
		done := len(raw) > 0
		for _, s := range raw {
			m := s.(map[string]any)
			out = append(out, m)
			done = done && m["send_status"] != "sending"
		}
		if done {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sends of %s stayed sending: %s", verificationID, r.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// attemptsOf writes a send's attempts as "provider:outcome" in order.
func attemptsOf(send map[string]any) string {
	var parts []string
	as, _ := send["attempts"].([]any)
	for _, a := range as {
		m := a.(map[string]any)
		parts = append(parts, fmt.Sprintf("%v:%v", m["provider"], m["outcome"]))
	}
	return strings.Join(parts, ",")
}

// metric is the line of one series in a scrape, "" when absent.
func metric(body, series string) string {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, series+" ") {
			return l
		}
	}
	return ""
}

func TestFailover(t *testing.T) {
	t.Run("DefiniteFailureMovesToTheNextProviderWithTheSameCode", func(t *testing.T) {
		first, second := smstest.New(t, "first-secret"), smstest.New(t, "second-secret")
		first.Set(smstest.Reply{Status: http.StatusBadRequest})
		in := servertest.Start(t, servertest.TwoWebhooks(t, first, second, nil))
		phone := servertest.NewPhone()

		r := servertest.Send(t, in, phone)
		servertest.WantStatus(t, r, http.StatusCreated, "")
		if first.Calls() != 1 || len(second.Received(phone)) != 1 || len(second.Received("")) != 1 {
			t.Fatalf("got %d calls at first and %d SMS at second, want 1 refused and 1 SMS", first.Calls(), len(second.Received("")))
		}
		code := servertest.LastCode(t, second, phone)
		sends := sendsOf(t, in, r.Str("id"))
		if len(sends) != 1 || attemptsOf(sends[0]) != "first:failed,second:sent" || sends[0]["provider"] != "second" ||
			sends[0]["send_status"] != "sent" || sends[0]["provider_message_id"] != "msg-"+second.Received(phone)[0].ID {
			t.Errorf("got sends %v, want one sent by second after first failed", sends)
		}
		body := scrapeMetrics(t, in)
		for _, want := range []string{
			`otpgate_delivery_attempts_total{channel="sms",outcome="failed",provider="first"} 1`,
			`otpgate_delivery_attempts_total{channel="sms",outcome="sent",provider="second"} 1`,
			`otpgate_provider_errors_total{kind="definite",provider="first"} 1`,
			`otpgate_sends_total{outcome="created"} 1`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %q", want)
			}
		}
		servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": code}), http.StatusOK, "")
		t.Logf("first provider 400 → second delivered: 201, attempts %s, SMS received: first 0, second %d", attemptsOf(sends[0]), len(second.Received("")))
	})

	t.Run("UnknownOutcomeDoesNotFailOverByDefault", func(t *testing.T) {
		first, second := smstest.New(t, "first-secret"), smstest.New(t, "second-secret")
		first.Set(smstest.Reply{Hang: true})
		in := servertest.Start(t, servertest.TwoWebhooks(t, first, second, map[string]string{"SMS_TIMEOUT": "300ms"}))
		phone := servertest.NewPhone()

		r := servertest.Send(t, in, phone)
		servertest.WantStatus(t, r, http.StatusBadGateway, "provider_error")
		if second.Calls() != 0 {
			t.Errorf("second was asked %d times, want never: the first may still deliver", second.Calls())
		}
		// Not refunded: the phone's 1/1m rule still counts the send, whose SMS may be out.
		servertest.WantStatus(t, servertest.Send(t, in, phone, "User-Agent", "other-client"), http.StatusTooManyRequests, "rate_limited")
		rows := servertest.SettledSends(t, in, phone)
		if !strings.Contains(rows.Raw, `"attempts":[{"provider":"first","outcome":"unknown"`) || strings.Contains(rows.Raw, `"provider":"second"`) {
			t.Errorf("history: got %s, want one unknown attempt at first", rows.Raw)
		}
		t.Logf("first provider times out, no failover: 502 provider_error, second asked %d times", second.Calls())
	})

	t.Run("UnknownOutcomeFailsOverWhenEnabled", func(t *testing.T) {
		first, second := smstest.New(t, "first-secret"), smstest.New(t, "second-secret")
		first.Set(smstest.Reply{Hang: true})
		in := servertest.Start(t, servertest.TwoWebhooks(t, first, second, map[string]string{"SMS_TIMEOUT": "300ms", "SMS_FAILOVER_ON_UNKNOWN": "true"}))
		phone := servertest.NewPhone()

		r := servertest.Send(t, in, phone)
		servertest.WantStatus(t, r, http.StatusCreated, "")
		sends := sendsOf(t, in, r.Str("id"))
		if len(second.Received(phone)) != 1 || attemptsOf(sends[0]) != "first:unknown,second:sent" {
			t.Errorf("got %d SMS at second and attempts %q, want 1 and first:unknown,second:sent", len(second.Received(phone)), attemptsOf(sends[0]))
		}
		// Both providers got the same code: whichever arrives works.
		if got := first.Received(phone); len(got) != 1 || got[0].Code != servertest.LastCode(t, second, phone) {
			t.Errorf("first got %v, want the same code as second", got)
		}
		t.Logf("first provider times out, SMS_FAILOVER_ON_UNKNOWN=true: 201, attempts %s", attemptsOf(sends[0]))
	})

	t.Run("EveryProviderRefusingIsDefiniteAndRefunded", func(t *testing.T) {
		first, second := smstest.New(t, "first-secret"), smstest.New(t, "second-secret")
		first.Set(smstest.Reply{Status: http.StatusBadRequest})
		second.Set(smstest.Reply{Status: http.StatusUnprocessableEntity})
		in := servertest.Start(t, servertest.TwoWebhooks(t, first, second, nil))
		phone := servertest.NewPhone()
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusBadGateway, "provider_error")
		second.Set(smstest.Reply{})
		// Refunded: the phone's 1/1m rule admits the next send at once, a new verification.
		servertest.WantStatus(t, servertest.Send(t, in, phone, "User-Agent", "other-client"), http.StatusCreated, "")
	})
}

func TestCircuitBreaker(t *testing.T) {
	first, second := smstest.New(t, "first-secret"), smstest.New(t, "second-secret")
	first.Set(smstest.Reply{Status: http.StatusServiceUnavailable})
	in := servertest.Start(t, servertest.TwoWebhooks(t, first, second, map[string]string{
		"SMS_BREAKER_FAILURES": "3", "SMS_BREAKER_COOLDOWN": "1s", "SMS_FAILOVER_ON_UNKNOWN": "true",
	}))
	sendOne := func() string {
		t.Helper()
		r := servertest.Send(t, in, servertest.NewPhone())
		servertest.WantStatus(t, r, http.StatusCreated, "")
		return attemptsOf(sendsOf(t, in, r.Str("id"))[0])
	}
	var log []string
	for i := range 3 {
		if got := sendOne(); got != "first:unknown,second:sent" {
			t.Fatalf("send %d: got attempts %q, want first:unknown,second:sent", i+1, got)
		}
	}
	log = append(log, "3 sends: first 503 (unknown), second sent")
	breaker := `otpgate_provider_breaker_state{provider="first"}`
	if got := metric(scrapeMetrics(t, in), breaker); got != breaker+" 2" {
		t.Errorf("after 3 failures: got %q, want open (2)", got)
	}
	for range 2 {
		if got := sendOne(); got != "first:skipped,second:sent" {
			t.Errorf("while open: got attempts %q, want first skipped", got)
		}
	}
	if first.Calls() != 3 {
		t.Errorf("first was asked %d times, want 3: an open breaker skips it", first.Calls())
	}
	log = append(log, fmt.Sprintf("breaker open: 2 sends skip first (first asked %d times in all)", first.Calls()))

	first.Set(smstest.Reply{})
	time.Sleep(1100 * time.Millisecond) // the cool-down
	if got := sendOne(); got != "first:sent" {
		t.Errorf("after the cool-down: got attempts %q, want the half-open probe to go to first and succeed", got)
	}
	if got := metric(scrapeMetrics(t, in), breaker); got != breaker+" 0" {
		t.Errorf("after a good probe: got %q, want closed (0)", got)
	}
	if got := sendOne(); got != "first:sent" {
		t.Errorf("closed again: got attempts %q, want first:sent", got)
	}
	log = append(log, "after 1s cool-down first recovered: probe sent, breaker closed, next send first:sent")
	body := scrapeMetrics(t, in)
	if want := `otpgate_delivery_attempts_total{channel="sms",outcome="skipped",provider="first"} 2`; !strings.Contains(body, want) {
		t.Errorf("metrics lack %q", want)
	}
	t.Log(strings.Join(log, "; "))
}
