package conformance

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	twilio "github.com/twilio/twilio-go"
	twclient "github.com/twilio/twilio-go/client"
	verify "github.com/twilio/twilio-go/rest/verify/v2"

	"otpgate/internal/server/servertest"
)

// twilioGoAccount is twilio-go with the account credential.
func twilioGoAccount(t *testing.T, s *twilioSetup, token string) *verify.ApiService {
	t.Helper()
	base, err := url.Parse(s.in.API)
	if err != nil {
		t.Fatal(err)
	}
	c := &twclient.Client{Credentials: twclient.NewCredentials(twilioAccountSID, token), HTTPClient: &http.Client{Transport: servertest.Rewrite(base)}}
	return twilio.NewRestClientWithParams(twilio.ClientParams{Client: c}).VerifyV2
}

// twilioGoServiceFlows: the Services resource with the account credential — create,
// fetch, update, list through every page, a verification of the new service, refusals,
// delete — and an app key, which changes nothing.
func twilioGoServiceFlows(t *testing.T, s *twilioSetup) {
	acct := twilioGoAccount(t, s, twilioAccountToken)
	created, err := acct.CreateService((&verify.CreateServiceParams{}).SetFriendlyName("Go conformance").SetCodeLength(7).SetDoNotShareWarningEnabled(true))
	if err != nil || !strings.HasPrefix(servertest.Str(created.Sid), "VA") || servertest.Str(created.FriendlyName) != "Go conformance" || created.CodeLength != 7 {
		t.Fatalf("create: got %+v, %v; want the new service", created, err)
	}
	sid := servertest.Str(created.Sid)
	if f, err := acct.FetchService(sid); err != nil || servertest.Str(f.Sid) != sid || f.CodeLength != 7 {
		t.Errorf("fetch: got %+v, %v", f, err)
	}
	if u, err := acct.UpdateService(sid, (&verify.UpdateServiceParams{}).SetCodeLength(8).SetFriendlyName("Go conformance 2")); err != nil ||
		u.CodeLength != 8 || servertest.Str(u.FriendlyName) != "Go conformance 2" {
		t.Errorf("update: got %+v, %v", u, err)
	}
	all, err := acct.ListService((&verify.ListServiceParams{}).SetPageSize(1))
	found := 0
	for _, svc := range all {
		if servertest.Str(svc.Sid) == sid || servertest.Str(svc.Sid) == s.serviceSID {
			found++
		}
	}
	if err != nil || found != 2 || len(all) < 3 {
		t.Errorf("list one per page: got %d services (%v), want the default one, the key app and the new one", len(all), err)
	}

	to := servertest.NewPhone()
	v, err := acct.CreateVerification(sid, (&verify.CreateVerificationParams{}).SetTo(to).SetChannel("sms"))
	if err != nil || servertest.Str(v.ServiceSid) != sid {
		t.Fatalf("the account's verification of the new service: got %+v, %v", v, err)
	}
	if code := servertest.LastCode(t, s.provider, to); len(code) != 8 {
		t.Errorf("got code %q, want the service's 8 digits", code)
	}

	_, err = acct.CreateService((&verify.CreateServiceParams{}).SetFriendlyName("x").SetLookupEnabled(true))
	servertest.WantTwilioError(t, "LookupEnabled=true", err, 60200, 400)
	_, err = acct.CreateService((&verify.CreateServiceParams{}).SetFriendlyName("x").SetCodeLength(11))
	servertest.WantTwilioError(t, "CodeLength=11", err, 60200, 400)
	_, err = acct.UpdateService(sid, (&verify.UpdateServiceParams{}).SetPushApnCredentialSid("CR"+strings.Repeat("a", 32)))
	servertest.WantTwilioError(t, "Push", err, 60200, 400)
	_, err = twilioGoAccount(t, s, twilioAccountToken+"x").FetchService(sid)
	servertest.WantTwilioError(t, "wrong account token", err, 20003, 401)
	key := twilioGo(t, s, s.secret)
	_, err = key.CreateService((&verify.CreateServiceParams{}).SetFriendlyName("x"))
	servertest.WantTwilioError(t, "create with an app key", err, 20003, 401)
	_, err = key.FetchService(sid)
	servertest.WantTwilioError(t, "another app's service with a key", err, 20404, 404)
	if own, err := key.FetchService(s.serviceSID); err != nil || servertest.Str(own.FriendlyName) != "Twilio clients" {
		t.Errorf("the key's own service: got %+v, %v", own, err)
	}

	if err := acct.DeleteService(sid); err != nil {
		t.Errorf("delete: %v", err)
	}
	_, err = acct.FetchService(sid)
	servertest.WantTwilioError(t, "fetch after delete", err, 20404, 404)
}
