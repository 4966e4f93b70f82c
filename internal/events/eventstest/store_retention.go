package eventstest

import (
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

// testEventRetention is part of testEvents: the history retention purges delivered and
// parked events, never pending ones.
func testEventRetention(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	e := fixture.New(t, newStore)
	e.Need(fixture.Retention)
	ep := e.Subscribe(otp.DefaultAppID, events.VerificationCreated)
	for _, phone := range []string{"+15550100011", "+15550100012", "+15550100013"} {
		e.Send(fixture.Params(phone, "123456", fixture.Base()))
	}
	c := e.Claim(fixture.Base())
	if len(c) != 3 {
		t.Fatalf("claimed %d, want 3", len(c))
	}
	e.SettleEvents(c[:1], events.Delivered, fixture.Base(), time.Time{})
	e.SettleEvents(c[1:2], events.Parked, fixture.Base(), time.Time{})
	e.SettleEvents(c[2:], events.Pending, fixture.Base(), fixture.Base().Add(time.Hour))
	if oldest, err := e.Lifecycle().Oldest(e.Ctx, "event_outbox"); err != nil || !oldest.Equal(fixture.Base()) {
		t.Errorf("Oldest: got %v, %v; want %v", oldest, err, fixture.Base())
	}
	n, err := e.Lifecycle().Purge(e.Ctx, "event_outbox", fixture.Base().Add(time.Second), 1000)
	if err != nil || n != 2 {
		t.Fatalf("Purge: got %d, %v; want the delivered and the parked event", n, err)
	}
	left, _ := e.Store.Deliveries(e.Ctx, otp.DefaultAppID, ep, events.DeliveryFilter{})
	if len(left) != 1 || left[0].Event.ID != c[2].Event.ID || left[0].Status != events.Pending {
		t.Errorf("left: got %v, want the pending event", deliveryTypes(left))
	}
	if oldest, err := e.Lifecycle().Oldest(e.Ctx, "event_outbox"); err != nil || !oldest.IsZero() {
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
