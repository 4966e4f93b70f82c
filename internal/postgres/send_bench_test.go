package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/testenv"
)

// resendPhones is how many phones a resend benchmark spreads its resends over, so that no
// verification collects more than a few codes.
const resendPhones = 200

// BenchmarkResend measures a resend's BeginSend on one connection, with the statements and
// round trips it takes: each phone's verification is created before the timer starts, and
// every op resends to one of them, naming the verification as the service does when it
// remembers it (Remembered), or not (NotRemembered: another instance sent the code, or it
// was forgotten).
func BenchmarkResend(b *testing.B) {
	b.Run("Remembered", func(b *testing.B) { benchResend(b, true) })
	b.Run("NotRemembered", func(b *testing.B) { benchResend(b, false) })
}

func benchResend(b *testing.B, remembered bool) {
	ctx := context.Background()
	pool, w := mustOpenCounted(b)
	s := postgres.New(pool, testenv.DataKeys())
	now := time.Now().UTC()
	send := func(phone string) otp.BeginSend {
		return otp.BeginSend{
			Phone: phone, Channel: "sms", Locale: "en", ClientIP: "192.0.2.1", Provider: "bench",
			Now: now, TTL: time.Hour, MaxSends: 1 << 20, MaxAttempts: 3,
			NewVerificationID: events.NewID(), SendID: events.NewID(), CodeHash: func(id string) []byte { return []byte(id) },
		}
	}
	phones := make([]string, resendPhones)
	seen := make([]otp.Verification, resendPhones)
	for i := range phones {
		phones[i] = fmt.Sprintf("+1555%07d", i)
		st, err := s.BeginSend(ctx, send(phones[i]))
		if err != nil {
			b.Fatal(err)
		}
		seen[i] = st.Verification
	}
	w.reset()
	n := 0
	for b.Loop() {
		i := n % len(phones)
		p := send(phones[i])
		if remembered {
			p.Seen = &seen[i]
		}
		st, err := s.BeginSend(ctx, p)
		if err != nil || st.Created {
			b.Fatalf("resend: got %+v, %v; want it counted", st, err)
		}
		seen[i] = st.Verification
		n++
	}
	b.ReportMetric(float64(w.statements.Load())/float64(n), "statements/op")
	b.ReportMetric(float64(w.trips.Load())/float64(n), "roundtrips/op")
}
