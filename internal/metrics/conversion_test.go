package metrics

import (
	"context"
	"testing"

	"otpgate/internal/otp"
)

// addressed answers sends and checks for the address and country of its fields, or err.
type addressed struct {
	otp.Verifier
	address, country string
	err              error
}

func (a addressed) Send(context.Context, otp.SendInput) (otp.SendResult, error) {
	return otp.SendResult{Verification: otp.Verification{Address: a.address}, Country: a.country}, a.err
}

func (a addressed) Check(context.Context, otp.CheckInput) (otp.CheckResult, error) {
	return otp.CheckResult{Verification: otp.Verification{Address: a.address}}, a.err
}

func TestConversionMetrics(t *testing.T) {
	m := New()
	ctx := context.Background()
	for _, a := range []addressed{
		{address: "+819012345678", country: "JP"},
		{address: "+819012345678", country: "JP"},
		{address: "+447911123456", country: "GB", err: otp.ErrDuplicateSubmit},
		{address: "a@example.com"},
	} {
		_, _ = m.Verifier(a).Send(ctx, otp.SendInput{})
	}
	for _, a := range []addressed{
		{address: "+819012345678"},
		{address: "+447911123456", err: &otp.ErrInvalidCode{AttemptsLeft: 2}},
		{address: "a@example.com"},
		{address: "not a number"},
	} {
		_, _ = m.Verifier(a).Check(ctx, otp.CheckInput{})
	}
	for _, c := range []struct {
		name, country string
		want          float64
	}{
		{"otpgate_country_sends_total", "JP", 2},
		{"otpgate_country_sends_total", "GB", 0}, // refused: no code went out
		{"otpgate_country_sends_total", "", 1},
		{"otpgate_country_approvals_total", "JP", 1},
		{"otpgate_country_approvals_total", "GB", 0}, // a wrong code approves nothing
		{"otpgate_country_approvals_total", "", 2},   // the email, and the number that does not parse
	} {
		if got := counter(t, m, c.name, "country", c.country); got != c.want {
			t.Errorf("%s{country=%q}: got %v, want %v", c.name, c.country, got, c.want)
		}
	}
}
