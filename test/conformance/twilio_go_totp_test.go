package conformance

import (
	"strings"
	"testing"
	"time"

	pqotp "github.com/pquerna/otp"
	pqtotp "github.com/pquerna/otp/totp"
	verify "github.com/twilio/twilio-go/rest/verify/v2"

	"otpgate/internal/server/servertest"
)

// totpCode makes the code of an otpauth URI at t with pquerna/otp, which shares nothing with
// otpgate's implementation.
func totpCode(t *testing.T, uri string, at time.Time) string {
	t.Helper()
	key, err := pqotp.NewKeyFromURL(uri)
	if err != nil {
		t.Fatalf("pquerna/otp reads %q: %v", uri, err)
	}
	code, err := pqtotp.GenerateCodeCustom(key.Secret(), at, pqtotp.ValidateOpts{Period: uint(key.Period()), Digits: key.Digits(), Algorithm: key.Algorithm()})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// binding reads a new factor's binding (secret and uri), which twilio-go leaves untyped.
func binding(t *testing.T, f *verify.VerifyV2NewFactor) (secret, uri string) {
	t.Helper()
	if f.Binding == nil {
		t.Fatalf("new factor %+v has no binding", f)
	}
	m, _ := (*f.Binding).(map[string]any)
	secret, _ = m["secret"].(string)
	uri, _ = m["uri"].(string)
	return secret, uri
}

// twilioGoTOTPFlows: Entities, Factors and Challenges through twilio-go with an app key —
// enrolment, a first code that verifies the factor, challenges approved once per code, the
// lists, the refusals, deletion.
func twilioGoTOTPFlows(t *testing.T, s *twilioSetup) {
	v2 := twilioGo(t, s, s.secret)
	identity := "ff483d1f-" + strings.ReplaceAll(servertest.NewPhone()[1:], "+", "")
	e, err := v2.CreateEntity(s.serviceSID, (&verify.CreateEntityParams{}).SetIdentity(identity))
	if err != nil || servertest.Str(e.Identity) != identity || !strings.HasPrefix(servertest.Str(e.Sid), "YE") || servertest.Str(e.ServiceSid) != s.serviceSID {
		t.Fatalf("create entity: got %+v, %v", e, err)
	}
	_, err = v2.CreateEntity(s.serviceSID, (&verify.CreateEntityParams{}).SetIdentity(identity))
	servertest.WantTwilioError(t, "the same identity twice", err, 60200, 400)

	nf, err := v2.CreateNewFactor(s.serviceSID, identity, (&verify.CreateNewFactorParams{}).
		SetFriendlyName("Ana's phone").SetFactorType("totp").SetConfigTimeStep(20))
	if err != nil || servertest.Str(nf.Status) != "unverified" || !strings.HasPrefix(servertest.Str(nf.Sid), "YF") || servertest.Str(nf.FactorType) != "totp" {
		t.Fatalf("create factor: got %+v, %v", nf, err)
	}
	secret, uri := binding(t, nf)
	if len(secret) != 32 || !strings.HasPrefix(uri, "otpauth://totp/Twilio%20clients:Ana%27s%20phone?") || !strings.Contains(uri, "period=20") {
		t.Fatalf("binding: got secret %q uri %q", secret, uri)
	}
	fsid := servertest.Str(nf.Sid)
	_, err = v2.CreateChallenge(s.serviceSID, identity, (&verify.CreateChallengeParams{}).SetFactorSid(fsid).SetAuthPayload("123456"))
	servertest.WantTwilioError(t, "challenge of an unverified factor", err, 60318, 403)

	now := time.Now()
	code := totpCode(t, uri, now)
	wrong := "000000"
	if wrong == code {
		wrong = "000001"
	}
	if f, err := v2.UpdateFactor(s.serviceSID, identity, fsid, (&verify.UpdateFactorParams{}).SetAuthPayload(wrong)); err != nil || servertest.Str(f.Status) != "unverified" {
		t.Errorf("verify with a wrong code: got %+v, %v; want 200 unverified", f, err)
	}
	if f, err := v2.UpdateFactor(s.serviceSID, identity, fsid, (&verify.UpdateFactorParams{}).SetAuthPayload(code)); err != nil || servertest.Str(f.Status) != "verified" {
		t.Fatalf("verify with pquerna/otp's code: got %+v, %v; want verified", f, err)
	}
	challenge := func(code string) *verify.VerifyV2Challenge {
		t.Helper()
		c, err := v2.CreateChallenge(s.serviceSID, identity, (&verify.CreateChallengeParams{}).SetFactorSid(fsid).SetAuthPayload(code))
		if err != nil {
			t.Fatalf("create challenge: %v", err)
		}
		return c
	}
	if c := challenge(code); servertest.Str(c.Status) != "denied" {
		t.Errorf("challenge with the code that verified the factor: got %s, want denied", servertest.Str(c.Status))
	}
	next := totpCode(t, uri, now.Add(20*time.Second)) // the next step, within the default skew of one
	approved := challenge(next)
	if servertest.Str(approved.Status) != "approved" || servertest.Str(approved.FactorSid) != fsid || !strings.HasPrefix(servertest.Str(approved.Sid), "YC") {
		t.Errorf("challenge with the next code: got %+v, want approved", approved)
	}
	if c := challenge(next); servertest.Str(c.Status) != "denied" {
		t.Errorf("the next code a second time: got %s, want denied", servertest.Str(c.Status))
	}
	if c, err := v2.FetchChallenge(s.serviceSID, identity, servertest.Str(approved.Sid)); err != nil || servertest.Str(c.Status) != "approved" {
		t.Errorf("fetch challenge: got %+v, %v", c, err)
	}
	list, err := v2.ListChallenge(s.serviceSID, identity, (&verify.ListChallengeParams{}).SetFactorSid(fsid).SetStatus("approved"))
	if err != nil || len(list) != 1 || servertest.Str(list[0].Sid) != servertest.Str(approved.Sid) {
		t.Errorf("list approved challenges: got %d (%v), want the one", len(list), err)
	}
	if all, err := v2.ListChallenge(s.serviceSID, identity, (&verify.ListChallengeParams{}).SetPageSize(1)); err != nil || len(all) != 3 {
		t.Errorf("list every challenge one per page: got %d (%v), want 3", len(all), err)
	}

	if f, err := v2.FetchFactor(s.serviceSID, identity, fsid); err != nil || servertest.Str(f.Status) != "verified" || servertest.Str(f.FriendlyName) != "Ana's phone" {
		t.Errorf("fetch factor: got %+v, %v", f, err)
	}
	if f, err := v2.UpdateFactor(s.serviceSID, identity, fsid, (&verify.UpdateFactorParams{}).SetFriendlyName("old phone")); err != nil || servertest.Str(f.FriendlyName) != "old phone" {
		t.Errorf("rename factor: got %+v, %v", f, err)
	}
	if fs, err := v2.ListFactor(s.serviceSID, identity, nil); err != nil || len(fs) != 1 {
		t.Errorf("list factors: got %d (%v), want 1", len(fs), err)
	}
	if es, err := v2.ListEntity(s.serviceSID, nil); err != nil || len(es) == 0 {
		t.Errorf("list entities: got %d (%v)", len(es), err)
	}

	_, err = v2.CreateNewFactor(s.serviceSID, identity, (&verify.CreateNewFactorParams{}).SetFriendlyName("x").SetFactorType("push"))
	servertest.WantTwilioError(t, "FactorType=push", err, 60200, 400)
	_, err = v2.CreateNewFactor(s.serviceSID, identity, (&verify.CreateNewFactorParams{}).SetFriendlyName("x").SetFactorType("totp").SetConfigCodeLength(9))
	servertest.WantTwilioError(t, "Config.CodeLength=9", err, 60200, 400)
	_, err = v2.UpdateFactor(s.serviceSID, identity, fsid, (&verify.UpdateFactorParams{}).SetConfigSkew(2))
	servertest.WantTwilioError(t, "changing Config.Skew", err, 60200, 400)
	_, err = v2.FetchFactor(s.serviceSID, identity, "YF"+strings.Repeat("0", 32))
	servertest.WantTwilioError(t, "an unknown factor", err, 20404, 404)

	if err := v2.DeleteFactor(s.serviceSID, identity, fsid); err != nil {
		t.Errorf("delete factor: %v", err)
	}
	if err := v2.DeleteEntity(s.serviceSID, identity); err != nil {
		t.Errorf("delete entity: %v", err)
	}
	_, err = v2.FetchEntity(s.serviceSID, identity)
	servertest.WantTwilioError(t, "a deleted entity", err, 20404, 404)
}
