package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

// BenchmarkSendWrites measures what events cost the statements of a verification's life,
// one at a time on one connection: the send (otpgate_begin_send), its outcome written
// directly, and the approving check; without any endpoint, with an endpoint of another
// app only, and with one of the app's that takes every event type.
func BenchmarkSendWrites(b *testing.B) {
	const other = "0190aaaa-0000-7000-8000-0000000000bb"
	for _, c := range []struct {
		name string
		app  string
	}{{"NoEndpoint", ""}, {"OtherAppsEndpoint", other}, {"Subscribed", otp.DefaultAppID}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			pool := stores.OpenPostgres(b)
			s := postgres.New(pool, testenv.DataKeys())
			if c.app != "" {
				id := events.NewID()
				err := s.CreateEndpoint(ctx, events.Endpoint{ID: id, AppID: c.app, URL: "http://receiver.test/", SecretSealed: []byte("x"),
					Types: events.Types(), CreatedAt: time.Now()}, history.AdminAction{Action: "webhook_added"})
				if err != nil {
					b.Fatal(err)
				}
			}
			now := time.Now().UTC()
			n := 0
			for b.Loop() {
				n++
				p := otp.BeginSend{
					Phone: fmt.Sprintf("+1555%07d", n), Channel: "sms", Locale: "en", ClientIP: "192.0.2.1", Provider: "bench",
					Now: now, TTL: time.Minute, MaxSends: 3, MaxAttempts: 3,
					NewVerificationID: events.NewID(), SendID: events.NewID(), CodeHash: func(string) []byte { return []byte("h") },
				}
				st, err := s.BeginSend(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.FinishSend(ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendSent, Now: now}); err != nil {
					b.Fatal(err)
				}
				_, _, err = s.Check(ctx, otp.CheckRef{ID: st.Verification.ID, Now: now, Seen: &st.Verification}, func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
					v.Status, v.ClosedAt = otp.StatusApproved, now
					return v, otp.OutcomeApproved
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			var rows int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM event_outbox`).Scan(&rows); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(rows)/float64(n), "events/op")
		})
	}
}
