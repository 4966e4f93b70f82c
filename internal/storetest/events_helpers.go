package storetest

import (
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// subscribe adds an endpoint of app for types (all when none) and returns its id.
func (e *env) subscribe(app string, types ...string) string {
	e.t.Helper()
	if len(types) == 0 {
		types = events.Types()
	}
	id := newID()
	err := e.Events.CreateEndpoint(e.ctx, events.Endpoint{
		ID: id, AppID: app, URL: "http://receiver.test/hook", SecretSealed: []byte("sealed"), Types: types, CreatedAt: base(),
	}, history.AdminAction{Action: "webhook_added", Target: id})
	if err != nil {
		e.t.Fatalf("CreateEndpoint: %v", err)
	}
	return id
}

// claim claims what is due at now, with a one-minute lease, and decodes every payload
// strictly.
func (e *env) claim(now time.Time) []events.Claim {
	e.t.Helper()
	c, err := e.Events.ClaimEvents(e.ctx, now, 100, time.Minute)
	if err != nil {
		e.t.Fatalf("ClaimEvents: %v", err)
	}
	for _, x := range c {
		if _, err := decodePayload(x.Event); err != nil {
			e.t.Errorf("claimed event %s: %v", x.Event.ID, err)
		}
	}
	return c
}

// settleEvents records results of claims, all with outcome at now.
func (e *env) settleEvents(claims []events.Claim, outcome string, now, next time.Time) {
	e.t.Helper()
	rs := make([]events.Result, len(claims))
	for i, c := range claims {
		rs[i] = events.Result{DeliveryID: c.DeliveryID, Attempt: c.Attempt, At: now, Outcome: outcome, Next: next, HTTPStatus: 500, Error: "down"}
		if outcome == events.Delivered {
			rs[i].HTTPStatus, rs[i].Error = 200, ""
		}
	}
	if err := e.Events.SettleEvents(e.ctx, rs); err != nil {
		e.t.Fatalf("SettleEvents: %v", err)
	}
}

// drain delivers everything due at now, round after round, and returns the events in the
// order they were claimed.
func (e *env) drain(now time.Time) []events.Event {
	e.t.Helper()
	var out []events.Event
	for range 100 {
		c := e.claim(now)
		if len(c) == 0 {
			return out
		}
		for _, x := range c {
			out = append(out, x.Event)
		}
		e.settleEvents(c, events.Delivered, now, time.Time{})
	}
	e.t.Fatal("drain: still claiming after 100 rounds")
	return nil
}

func types(evs []events.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// payload decodes ev's payload strictly into its Go type T.
func payload[T any](t *testing.T, ev events.Event) T {
	t.Helper()
	v, err := decodePayload(ev)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := v.(*T)
	if !ok {
		var want T
		t.Fatalf("%s payload: got a %T, want a %T", ev.Type, v, want)
	}
	return *d
}

func verificationPayload(t *testing.T, ev events.Event) events.VerificationData {
	t.Helper()
	return payload[events.VerificationData](t, ev)
}

// testEventRetention is part of testEvents: the history retention purges delivered and
// parked events, never pending ones.
func testEventRetention(t *testing.T, newStore func(t *testing.T) Stores) {
	e := newEnv(t, newStore)
	e.need(Retention)
	ep := e.subscribe(otp.DefaultAppID, events.VerificationCreated)
	for _, phone := range []string{"+15550100011", "+15550100012", "+15550100013"} {
		e.send(params(phone, "123456", base()))
	}
	c := e.claim(base())
	if len(c) != 3 {
		t.Fatalf("claimed %d, want 3", len(c))
	}
	e.settleEvents(c[:1], events.Delivered, base(), time.Time{})
	e.settleEvents(c[1:2], events.Parked, base(), time.Time{})
	e.settleEvents(c[2:], events.Pending, base(), base().Add(time.Hour))
	if oldest, err := e.lifecycle().Oldest(e.ctx, "event_outbox"); err != nil || !oldest.Equal(base()) {
		t.Errorf("Oldest: got %v, %v; want %v", oldest, err, base())
	}
	n, err := e.lifecycle().Purge(e.ctx, "event_outbox", base().Add(time.Second), 1000)
	if err != nil || n != 2 {
		t.Fatalf("Purge: got %d, %v; want the delivered and the parked event", n, err)
	}
	left, _ := e.Events.Deliveries(e.ctx, otp.DefaultAppID, ep, events.DeliveryFilter{})
	if len(left) != 1 || left[0].Event.ID != c[2].Event.ID || left[0].Status != events.Pending {
		t.Errorf("left: got %v, want the pending event", deliveryTypes(left))
	}
	if oldest, err := e.lifecycle().Oldest(e.ctx, "event_outbox"); err != nil || !oldest.IsZero() {
		t.Errorf("Oldest after: got %v, %v; want none", oldest, err)
	}
}

func claimTypes(cs []events.Claim) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Event.Type
	}
	return out
}

func deliveryTypes(ds []events.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Event.Type + ":" + d.Status
	}
	return out
}
