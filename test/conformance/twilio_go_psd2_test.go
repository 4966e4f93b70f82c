package conformance

import (
	"strings"
	"testing"

	verify "github.com/twilio/twilio-go/rest/verify/v2"

	"otpgate/internal/server/servertest"
)

// twilioGoPSD2Flows drives PSD2 dynamic linking through twilio-go: a service with
// Psd2Enabled, a verification with Amount and Payee, a check with another amount or payee
// (not approved, as Twilio answers it) and then with the same ones (approved).
func twilioGoPSD2Flows(t *testing.T, s *twilioSetup) {
	acct := twilioGoAccount(t, s, twilioAccountToken)
	created, err := acct.CreateService((&verify.CreateServiceParams{}).SetFriendlyName("Go PSD2").SetPsd2Enabled(true))
	if err != nil || created.Psd2Enabled == nil || !*created.Psd2Enabled {
		t.Fatalf("create service: got %+v, %v; want psd2_enabled", created, err)
	}
	sid := servertest.Str(created.Sid)
	t.Cleanup(func() { _ = acct.DeleteService(sid) })
	const amount, payee = "€39.99", "Acme Öl GmbH"

	to := servertest.NewPhone()
	v, err := acct.CreateVerification(sid, (&verify.CreateVerificationParams{}).SetTo(to).SetChannel("sms").SetAmount(amount).SetPayee(payee))
	if err != nil || servertest.Str(v.Amount) != amount || servertest.Str(v.Payee) != payee {
		t.Fatalf("create: got %+v, %v; want the amount and payee shown", v, err)
	}
	code := servertest.LastCode(t, s.provider, to)
	if got := s.provider.Received(to); len(got) != 1 || !strings.Contains(got[0].Body, amount) || !strings.Contains(got[0].Body, payee) {
		t.Errorf("message: got %+v, want the amount and payee in it", got)
	}
	check := func(amount, payee string) (*verify.VerifyV2VerificationCheck, error) {
		return acct.CreateVerificationCheck(sid, (&verify.CreateVerificationCheckParams{}).SetTo(to).SetCode(code).SetAmount(amount).SetPayee(payee))
	}
	for name, tx := range map[string][2]string{"another amount": {"€399.9", payee}, "another payee": {amount, "Acme Oil GmbH"}} {
		c, err := check(tx[0], tx[1])
		if err != nil || servertest.Str(c.Status) != "pending" || c.Valid == nil || *c.Valid {
			t.Errorf("%s: got %+v, %v; want pending, valid false", name, c, err)
		}
	}
	c, err := check(amount, payee)
	if err != nil || servertest.Str(c.Status) != "approved" || c.Valid == nil || !*c.Valid || servertest.Str(c.Amount) != amount || servertest.Str(c.Payee) != payee {
		t.Errorf("the same amount and payee: got %+v, %v; want approved", c, err)
	}

	_, err = acct.CreateVerification(sid, (&verify.CreateVerificationParams{}).SetTo(servertest.NewPhone()).SetChannel("sms"))
	servertest.WantTwilioError(t, "no amount and payee on a PSD2 service", err, 60200, 400)
	_, err = acct.CreateVerification(sid, (&verify.CreateVerificationParams{}).SetTo(servertest.NewPhone()).SetChannel("sms").SetAmount("lots").SetPayee(payee))
	servertest.WantTwilioError(t, "an amount that is no amount", err, 60200, 400)
	_, err = acct.CreateVerification(sid, (&verify.CreateVerificationParams{}).SetTo(servertest.NewPhone()).SetChannel("sms").SetAmount(amount).SetPayee("Acme\nCall us"))
	servertest.WantTwilioError(t, "a payee on two lines", err, 60200, 400)
	_, err = twilioGo(t, s, s.secret).CreateVerification(s.serviceSID, (&verify.CreateVerificationParams{}).SetTo(servertest.NewPhone()).SetChannel("sms").SetAmount(amount).SetPayee(payee))
	servertest.WantTwilioError(t, "amount and payee on a service without PSD2", err, 60200, 400)
}
