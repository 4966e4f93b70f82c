package otp

import (
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	s := &Service{cfg: Config{Secret: []byte("k")}}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	base := Verification{ID: "0190b5e4-6f7c-7b3a-9d4e-2c1f0a9b8c7d", Status: StatusPending, MaxAttempts: 3, ExpiresAt: now.Add(time.Minute)}
	base.CodeHashes = [][]byte{hashCode(s.cfg.Secret, base.ID, "123456")}
	with := func(f func(*Verification)) Verification { v := base; f(&v); return v }

	tests := []struct {
		name         string
		v            Verification
		code         string
		wantOutcome  CheckOutcome
		wantStatus   Status
		wantAttempts int
	}{
		{"RightCodeApproves", base, "123456", OutcomeApproved, StatusApproved, 0},
		{"WrongCodeCounts", base, "000000", OutcomeInvalidCode, StatusPending, 1},
		{"LastWrongGuessKills", with(func(v *Verification) { v.Attempts = 2 }), "000000", OutcomeInvalidCode, StatusFailed, 3},
		{"SpentBudgetRefusesRightCode", with(func(v *Verification) { v.Attempts = 3 }), "123456", OutcomeTooManyAttempts, StatusFailed, 3},
		{"ExpiredAtDeadline", with(func(v *Verification) { v.ExpiresAt = now }), "123456", OutcomeExpired, StatusExpired, 0},
		{"AlreadyApproved", with(func(v *Verification) { v.Status = StatusApproved }), "123456", OutcomeNotPending, StatusApproved, 0},
		{"Canceled", with(func(v *Verification) { v.Status = StatusCanceled }), "123456", OutcomeNotPending, StatusCanceled, 0},
		{"Dead", with(func(v *Verification) { v.Status = StatusFailed }), "123456", OutcomeTooManyAttempts, StatusFailed, 0},
		{"ClosedExpired", with(func(v *Verification) { v.Status = StatusExpired }), "123456", OutcomeExpired, StatusExpired, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, outcome := s.decide(tt.v, tt.code, now)
			if outcome != tt.wantOutcome || v.Status != tt.wantStatus || v.Attempts != tt.wantAttempts {
				t.Errorf("got %s %s attempts=%d, want %s %s attempts=%d", outcome, v.Status, v.Attempts, tt.wantOutcome, tt.wantStatus, tt.wantAttempts)
			}
			if v.Status != StatusPending && tt.v.Status == StatusPending && !v.ClosedAt.Equal(now) {
				t.Errorf("closed_at got %v, want %v", v.ClosedAt, now)
			}
		})
	}
}

func TestCheckInput(t *testing.T) {
	tests := []struct {
		name  string
		in    CheckInput
		field string
	}{
		{"Valid", CheckInput{Phone: "+819012345678", Code: "123456"}, ""},
		{"ValidID", CheckInput{ID: "0190b5e4-6f7c-7b3a-9d4e-2c1f0a9b8c7d", Code: "123456"}, ""},
		{"Neither", CheckInput{Code: "123456"}, "phone"},
		{"Both", CheckInput{Phone: "+819012345678", ID: "0190b5e4-6f7c-7b3a-9d4e-2c1f0a9b8c7d", Code: "123456"}, "id"},
		{"BadID", CheckInput{ID: "42", Code: "123456"}, "id"},
		{"ShortCode", CheckInput{Phone: "+819012345678", Code: "12345"}, "code"},
		{"LetterCode", CheckInput{Phone: "+819012345678", Code: "12345a"}, "code"},
		{"FullWidthCode", CheckInput{Phone: "+819012345678", Code: "１２３４５６"}, "code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkInput(tt.in, 6)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			ir, ok := err.(*ErrInvalidRequest)
			if !ok || ir.Fields[tt.field] == "" {
				t.Errorf("got %v, want a problem with %q", err, tt.field)
			}
		})
	}
}
