package conformance

import (
	"strings"
	"testing"

	verify "github.com/twilio/twilio-go/rest/verify/v2"

	"otpgate/internal/server/servertest"
)

// twilioGoAttemptFlows: a new service's three verifications, one approved, as Verification
// Attempts — listed one per page (following the PageToken of next_page_url), filtered by
// conversion, fetched one by one — and summed up; refusals; an app key sees its own.
func twilioGoAttemptFlows(t *testing.T, s *twilioSetup) {
	acct := twilioGoAccount(t, s, twilioAccountToken)
	svc, err := acct.CreateService((&verify.CreateServiceParams{}).SetFriendlyName("Go attempts"))
	if err != nil {
		t.Fatal(err)
	}
	sid := servertest.Str(svc.Sid)
	var verifications []string
	phones := []string{servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone()}
	for _, to := range phones {
		v, err := acct.CreateVerification(sid, (&verify.CreateVerificationParams{}).SetTo(to).SetChannel("sms"))
		if err != nil {
			t.Fatal(err)
		}
		verifications = append(verifications, servertest.Str(v.Sid))
	}
	if c, err := acct.CreateVerificationCheck(sid, (&verify.CreateVerificationCheckParams{}).SetTo(phones[1]).SetCode(servertest.LastCode(t, s.provider, phones[1]))); err != nil || servertest.Str(c.Status) != "approved" {
		t.Fatalf("check: got %+v, %v", c, err)
	}

	all, err := acct.ListVerificationAttempt((&verify.ListVerificationAttemptParams{}).SetVerifyServiceSid(sid).SetPageSize(1))
	if err != nil || len(all) != 3 {
		t.Fatalf("list one per page: got %d attempts, %v; want 3", len(all), err)
	}
	for i, a := range all { // newest first
		if servertest.Str(a.VerificationSid) != verifications[2-i] || servertest.Str(a.ServiceSid) != sid || a.Channel == nil || *a.Channel != "sms" ||
			!strings.HasPrefix(servertest.Str(a.Sid), "VL") {
			t.Errorf("attempt %d: got %+v, want the send of %s", i, a, verifications[2-i])
		}
	}
	converted, err := acct.ListVerificationAttempt((&verify.ListVerificationAttemptParams{}).SetVerifyServiceSid(sid).SetStatus("converted"))
	if err != nil || len(converted) != 1 || servertest.Str(converted[0].VerificationSid) != verifications[1] {
		t.Errorf("converted: got %+v, %v; want the approved verification's send", converted, err)
	}
	one, err := acct.FetchVerificationAttempt(servertest.Str(all[0].Sid))
	if err != nil || servertest.Str(one.Sid) != servertest.Str(all[0].Sid) || one.ConversionStatus == nil || *one.ConversionStatus != "unconverted" {
		t.Errorf("fetch: got %+v, %v", one, err)
	}
	sum, err := acct.FetchVerificationAttemptsSummary((&verify.FetchVerificationAttemptsSummaryParams{}).SetVerifyServiceSid(sid).SetChannel("sms"))
	if err != nil || sum.TotalAttempts != 3 || sum.TotalConverted != 1 || sum.TotalUnconverted != 2 || servertest.Str(sum.ConversionRatePercentage) != "33.33" {
		t.Errorf("summary: got %+v, %v; want 3 attempts, 1 converted, 33.33%%", sum, err)
	}

	_, err = acct.ListVerificationAttempt((&verify.ListVerificationAttemptParams{}).SetChannel("fax"))
	servertest.WantTwilioError(t, "Channel=fax", err, 60200, 400)
	_, err = acct.FetchVerificationAttemptsSummary((&verify.FetchVerificationAttemptsSummaryParams{}).SetDestinationPrefix("81"))
	servertest.WantTwilioError(t, "DestinationPrefix without +", err, 60200, 400)
	key := twilioGo(t, s, s.secret)
	_, err = key.ListVerificationAttempt((&verify.ListVerificationAttemptParams{}).SetVerifyServiceSid(sid))
	servertest.WantTwilioError(t, "another service's attempts with a key", err, 20404, 404)
	_, err = key.FetchVerificationAttempt(servertest.Str(all[0].Sid))
	servertest.WantTwilioError(t, "another service's attempt with a key", err, 20404, 404)
}

// twilioGoTemplateFlows: the Templates list, and TemplateSid on a send, which must name
// the templates the service renders from.
func twilioGoTemplateFlows(t *testing.T, s *twilioSetup) {
	acct := twilioGoAccount(t, s, twilioAccountToken)
	list, err := acct.ListVerificationTemplate((&verify.ListVerificationTemplateParams{}).SetFriendlyName("built-in"))
	if err != nil || len(list) != 1 || servertest.Str(list[0].Sid) != "HJ00000000000000000000000000000000" || list[0].Channels == nil {
		t.Fatalf("templates: got %+v, %v; want the built-in ones", list, err)
	}
	v2 := twilioGo(t, s, s.secret)
	to := servertest.NewPhone()
	if v, err := v2.CreateVerification(s.serviceSID, (&verify.CreateVerificationParams{}).SetTo(to).SetTemplateSid(servertest.Str(list[0].Sid))); err != nil || servertest.Str(v.Status) != "pending" {
		t.Errorf("TemplateSid of the built-in templates: got %+v, %v", v, err)
	}
	_, err = v2.CreateVerification(s.serviceSID, (&verify.CreateVerificationParams{}).SetTo(servertest.NewPhone()).SetTemplateSid("HJ"+strings.Repeat("a", 32)))
	servertest.WantTwilioError(t, "TemplateSid of other templates", err, 60200, 400)
}
