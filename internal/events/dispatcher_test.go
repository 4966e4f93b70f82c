package events_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/outbound"
	"otpgate/internal/sms"
	"otpgate/internal/testenv/fixture"
)

const secret = "whsec_test_secret_0123456789"

// receiver is a webhook receiver that checks signatures, deduplicates by id and answers
// 500 to the first fail requests.
type receiver struct {
	t    *testing.T
	mu   sync.Mutex
	fail int
	seen map[string]bool
	got  []events.Event
	hits int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := sms.VerifySignature(secret, r.Header.Get(sms.SignatureHeader), body, time.Now(), time.Minute); err != nil {
		rc.t.Errorf("signature: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var ev events.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		rc.t.Errorf("body %s: %v", body, err)
	}
	if r.Header.Get(events.EventIDHeader) != ev.ID || r.Header.Get(events.EventTypeHeader) != ev.Type {
		rc.t.Errorf("headers: got %s %s, want %s %s", r.Header.Get(events.EventIDHeader), r.Header.Get(events.EventTypeHeader), ev.ID, ev.Type)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.hits++
	if rc.fail > 0 {
		rc.fail--
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if !rc.seen[ev.ID] {
		rc.seen[ev.ID] = true
		rc.got = append(rc.got, ev)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) events() []events.Event {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

func newSealer(t *testing.T) *events.Sealer {
	t.Helper()
	s, err := events.NewSealer([]byte("an OTP_SECRET of at least thirty-two characters"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// addEndpoint subscribes url for the default app to every event type.
func addEndpoint(t *testing.T, store *inmem.Store, sealer *events.Sealer, url string) string {
	t.Helper()
	id := events.NewID()
	err := store.CreateEndpoint(t.Context(), events.Endpoint{
		ID: id, AppID: otp.DefaultAppID, URL: url, SecretSealed: sealer.Seal(id, secret), Types: events.Types(), CreatedAt: time.Now(),
	}, history.AdminAction{Action: "webhook_added"})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// verify sends a code, records it sent and checks it right, as the service would.
func verify(t *testing.T, store *inmem.Store, phone string) string {
	t.Helper()
	now := time.Now().UTC()
	hash := func(string) []byte { return []byte("hash") }
	sendID := events.NewID()
	st, err := store.BeginSend(t.Context(), otp.BeginSend{
		Phone: phone, Channel: "sms", Locale: "en", Provider: "log", Now: now, TTL: time.Minute, MaxSends: 3, MaxAttempts: 3,
		NewVerificationID: events.NewID(), SendID: sendID, CodeHash: hash,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.FinishSend(t.Context(), otp.FinishSend{SendID: sendID, VerificationID: st.Verification.ID, Status: otp.SendSent, Now: now}); err != nil {
		t.Fatal(err)
	}
	_, _, err = store.Check(t.Context(), otp.CheckRef{ID: st.Verification.ID, Now: now}, func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
		v.Status, v.ClosedAt = otp.StatusApproved, now
		return v, otp.OutcomeApproved
	})
	if err != nil {
		t.Fatal(err)
	}
	return st.Verification.ID
}

func run(t *testing.T, d *events.Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func fastOptions() events.Options {
	return events.Options{Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, Poll: 5 * time.Millisecond, Timeout: time.Second,
		Outbound: outbound.New(outbound.Loopback())} // the receivers are httptest servers on loopback
}

func TestDispatcher(t *testing.T) {
	t.Run("DeliversSignedInOrderThroughFailures", func(t *testing.T) {
		store, sealer := inmem.New(), newSealer(t)
		rc := &receiver{t: t, fail: 4, seen: map[string]bool{}}
		srv := httptest.NewServer(rc)
		t.Cleanup(srv.Close)
		addEndpoint(t, store, sealer, srv.URL+"/hook?token=x")
		a := verify(t, store, "+15550100001")
		b := verify(t, store, "+15550100002")
		d := events.NewDispatcher(store, sealer, slog.New(slog.DiscardHandler), fastOptions())
		run(t, d)
		fixture.Eventually(t, "6 events", 10*time.Second, func() bool { return len(rc.events()) == 6 })
		order := map[string][]string{}
		for _, ev := range rc.events() {
			var v events.VerificationData
			if err := json.Unmarshal(ev.Data, &v); err != nil {
				t.Fatal(err)
			}
			order[v.VerificationID] = append(order[v.VerificationID], ev.Type)
		}
		want := []string{events.VerificationCreated, events.VerificationSent, events.VerificationApproved}
		if !slices.Equal(order[a], want) || !slices.Equal(order[b], want) {
			t.Errorf("got %v, want %v for each verification", order, want)
		}
		fixture.Eventually(t, "counters", 10*time.Second, func() bool { return d.Delivered() == 6 })
		if d.Retried() != 4 || d.Parked() != 0 {
			t.Errorf("retried %d parked %d, want 4 and 0", d.Retried(), d.Parked())
		}
	})

	t.Run("ParksAfterTheRetryWindow", func(t *testing.T) {
		store, sealer := inmem.New(), newSealer(t)
		rc := &receiver{t: t, fail: 1 << 30, seen: map[string]bool{}}
		srv := httptest.NewServer(rc)
		t.Cleanup(srv.Close)
		ep := addEndpoint(t, store, sealer, srv.URL)
		verify(t, store, "+15550100003")
		opts := fastOptions()
		opts.RetryFor = 50 * time.Millisecond
		d := events.NewDispatcher(store, sealer, slog.New(slog.DiscardHandler), opts)
		run(t, d)
		fixture.Eventually(t, "all three parked", 10*time.Second, func() bool { return d.Parked() == 3 })
		ds, err := store.Deliveries(t.Context(), otp.DefaultAppID, ep, events.DeliveryFilter{Status: events.Parked})
		if err != nil || len(ds) != 3 {
			t.Fatalf("parked: got %d, %v", len(ds), err)
		}
		// The window counts from each event's creation: the later events of the verification,
		// held up behind the first, are past it at their first attempt.
		for i, x := range ds {
			if x.LastStatus != 500 || !strings.Contains(x.LastError, "500") || x.Attempts < 1 || (i == len(ds)-1 && x.Attempts < 2) {
				t.Errorf("parked delivery %s: got %d attempts, last %d %q; want attempts (several for the first) ending in 500",
					x.Event.Type, x.Attempts, x.LastStatus, x.LastError)
			}
		}
		if d.Delivered() != 0 || d.Retried() == 0 {
			t.Errorf("delivered %d retried %d, want 0 and some", d.Delivered(), d.Retried())
		}
	})

	t.Run("ASecretSealedWithAnotherKeyIsParkedAtOnce", func(t *testing.T) {
		store, sealer := inmem.New(), newSealer(t)
		rc := &receiver{t: t, seen: map[string]bool{}}
		srv := httptest.NewServer(rc)
		t.Cleanup(srv.Close)
		addEndpoint(t, store, sealer, srv.URL)
		verify(t, store, "+15550100004")
		other, _ := events.NewSealer([]byte("another OTP_SECRET of thirty-two characters"))
		d := events.NewDispatcher(store, other, slog.New(slog.DiscardHandler), fastOptions())
		run(t, d)
		fixture.Eventually(t, "parked", 10*time.Second, func() bool { return d.Parked() >= 1 })
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if rc.hits != 0 {
			t.Errorf("receiver got %d requests, want none", rc.hits)
		}
	})
}

func TestPostSignsLikeTheSMSWebhook(t *testing.T) {
	var header string
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header, body = r.Header.Get("Otpgate-Signature"), must(io.ReadAll(r.Body))
	}))
	t.Cleanup(srv.Close)
	at := time.Unix(1_900_000_000, 0)
	ev := events.Event{ID: "e1", Type: events.VerificationApproved, CreatedAt: at, Data: json.RawMessage(`{"a":1}`)}
	if _, err := events.Post(t.Context(), srv.Client(), time.Second, srv.URL, secret, ev, at); err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("1900000000." + string(body)))
	if want := "t=1900000000,v1=" + hex.EncodeToString(m.Sum(nil)); header != want {
		t.Errorf("got %q, want %q", header, want)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil || len(got) != 4 || got["id"] != "e1" || got["type"] != events.VerificationApproved {
		t.Errorf("body: got %s, want id, type, created_at and data", body)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestSealer(t *testing.T) {
	s := newSealer(t)
	sealed := s.Seal("ep1", secret)
	if strings.Contains(string(sealed), secret) {
		t.Fatal("sealed secret holds the secret")
	}
	if got, err := s.Open("ep1", sealed); err != nil || got != secret {
		t.Errorf("Open: got %q, %v", got, err)
	}
	if _, err := s.Open("ep2", sealed); err == nil {
		t.Error("Open for another endpoint: got nil, want an error")
	}
}
