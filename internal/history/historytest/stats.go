package historytest

import (
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

func testStats(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("CountsPerBucket", func(t *testing.T) {
		e := fixture.New(t, newStore)
		seedStats(e)
		e.SetNow(fixture.Base().Add(2*time.Hour + 30*time.Minute))
		got, err := e.Store.Stats(e.Ctx, fixture.Base().Add(10*time.Minute), time.Hour, "")
		if err != nil {
			t.Fatalf("Stats: %v", err)
		}
		want := []history.StatBucket{
			{Start: fixture.Base(), Sends: 2, Failed: 1, Blocked: map[string]int{"phone 1/1m": 2}, Duplicates: 1, Approvals: 1, ApprovalRatio: 0.5},
			{Start: fixture.Base().Add(time.Hour), Sends: 1, Blocked: map[string]int{"ip 10/1h": 1}},
			{Start: fixture.Base().Add(2 * time.Hour), Sends: 1, Blocked: map[string]int{}, Approvals: 1, ApprovalRatio: 1},
		}
		fixture.WantBuckets(t, got, want)
	})

	t.Run("DayBucketsStartAtMidnightUTC", func(t *testing.T) {
		e := fixture.New(t, newStore)
		seedStats(e)
		e.SetNow(fixture.Base().Add(3 * time.Hour))
		got, err := e.Store.Stats(e.Ctx, fixture.Base(), 24*time.Hour, "")
		if err != nil {
			t.Fatalf("Stats: %v", err)
		}
		midnight := time.Date(2030, 3, 4, 0, 0, 0, 0, time.UTC)
		fixture.WantBuckets(t, got, []history.StatBucket{{
			Start: midnight, Sends: 5, Failed: 1, Duplicates: 1, Approvals: 2, ApprovalRatio: 0.4,
			Blocked: map[string]int{"phone 1/1m": 2, "ip 10/1h": 1},
		}})
	})

	t.Run("BadBucketOrRangeIsAnInvalidRequest", func(t *testing.T) {
		e := fixture.New(t, newStore)
		for _, b := range []time.Duration{0, -time.Hour, 30 * time.Second, 90*time.Second + time.Millisecond} {
			_, err := e.Store.Stats(e.Ctx, fixture.Base(), b, "")
			fixture.WantInvalid(t, "bucket "+b.String(), err, "bucket")
		}
		_, err := e.Store.Stats(e.Ctx, fixture.Base().Add(-(history.MaxStatBuckets+1)*time.Hour), time.Hour, "")
		fixture.WantInvalid(t, "too many buckets", err, "since")
		_, err = e.Store.Stats(e.Ctx, fixture.Base().Add(2*time.Hour), time.Hour, "")
		fixture.WantInvalid(t, "since after now", err, "since")
	})
}

// seedStats writes, per hour from base: hour 0 two sends (one approved at +4m,
// one failed), two phone blocks and a duplicate; hour 1 a send approved in hour 2
// and an IP block; hour 2 a send still sending; and one send an hour before base.
func seedStats(e *fixture.Env) {
	e.T.Helper()
	at := func(d time.Duration) time.Time { return fixture.Base().Add(d) }
	sendAt := func(phone string, d time.Duration, finish otp.SendStatus) otp.Verification {
		p := fixture.Params(phone, "111111", at(d))
		v := e.Send(p).Verification
		if finish != "" {
			if err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: v.ID, Status: finish, Now: p.Now}); err != nil {
				e.T.Fatalf("FinishSend: %v", err)
			}
		}
		return v
	}
	sendAt("+819000000000", -time.Hour, otp.SendSent)
	v := sendAt("+819000000001", time.Minute, otp.SendSent)
	e.Check(v.ID, "000000", at(3*time.Minute))
	e.Check(v.ID, "111111", at(4*time.Minute))
	sendAt("+819000000002", 2*time.Minute, otp.SendFailed)
	v = sendAt("+819000000003", time.Hour+58*time.Minute, otp.SendSent)
	e.Check(v.ID, "111111", at(2*time.Hour+time.Minute))
	sendAt("+819000000004", 2*time.Hour+5*time.Minute, "")
	for _, d := range []otp.DeniedSend{
		{Status: otp.SendBlocked, Reason: "phone 1/1m", Time: at(3 * time.Minute)},
		{Status: otp.SendBlocked, Reason: "phone 1/1m", Time: at(59*time.Minute + 59*time.Second)},
		{Status: otp.SendDuplicate, Reason: "duplicate 1/5s", Time: at(4 * time.Minute)},
		{Status: otp.SendBlocked, Reason: "ip 10/1h", Time: at(time.Hour)},
	} {
		d.ID, d.Phone, d.ClientIP = fixture.NewID(), "+819000000001", "192.0.2.1"
		e.Denied.RecordDenied(d)
	}
	e.MustFlush()
}
