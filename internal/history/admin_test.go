package history_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/history"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
)

// seedSent records one finished send for phone at at in the store.
func seedSent(t *testing.T, mem *inmem.Store, phone string, at time.Time, status otp.SendStatus) {
	t.Helper()
	ctx := context.Background()
	sendID := uuid.Must(uuid.NewV7()).String()
	start, err := mem.BeginSend(ctx, otp.BeginSend{
		Phone: phone, Channel: "sms", Locale: "en", Now: at, TTL: time.Minute, MaxSends: 5, MaxAttempts: 5,
		NewVerificationID: uuid.Must(uuid.NewV7()).String(), SendID: sendID,
		CodeHash: func(string) []byte { return []byte("hash") },
	})
	if err != nil {
		t.Fatalf("BeginSend: %v", err)
	}
	if err := mem.FinishSend(ctx, otp.FinishSend{SendID: sendID, VerificationID: start.Verification.ID, Status: status, Now: at}); err != nil {
		t.Fatalf("FinishSend: %v", err)
	}
}

func TestAdminChartsAddHoursIntoDays(t *testing.T) {
	now := time.Date(2030, 1, 9, 15, 30, 0, 0, time.UTC)
	mem := inmem.New()
	mem.Now = func() time.Time { return now }
	for i, back := range []time.Duration{time.Minute, 23*time.Hour + 59*time.Minute, 25 * time.Hour, 3 * 24 * time.Hour, 6*24*time.Hour + time.Hour} {
		seedSent(t, mem, "+81901111000"+string(rune('0'+i)), now.Add(-back), otp.SendSent)
	}
	// Before the first day's midnight: neither chart shows it.
	seedSent(t, mem, "+819011110009", history.BucketStart(now.Add(-6*24*time.Hour), 24*time.Hour).Add(-time.Second), otp.SendFailed)

	a := history.NewAdmin(mem, nil, nil)
	a.Now = mem.Now
	hours, days, err := a.Charts(context.Background())
	if err != nil {
		t.Fatalf("Charts: %v", err)
	}
	wantHours, err := mem.Stats(context.Background(), now.Add(-23*time.Hour), time.Hour, "")
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	wantDays, err := mem.Stats(context.Background(), now.Add(-6*24*time.Hour), 24*time.Hour, "")
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	t.Run("HoursAreTheLast24", func(t *testing.T) {
		if !reflect.DeepEqual(hours, wantHours) {
			t.Errorf("got %+v, want %+v", hours, wantHours)
		}
	})
	t.Run("DaysAreTheLast7", func(t *testing.T) {
		if !reflect.DeepEqual(days, wantDays) {
			t.Errorf("got %+v, want %+v", days, wantDays)
		}
		total := 0
		for _, d := range days {
			total += d.Sends
		}
		if len(days) != 7 || total != 5 {
			t.Errorf("got %d days with %d sends, want 7 days with 5", len(days), total)
		}
	})
}
