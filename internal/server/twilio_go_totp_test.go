package server

import (
	"strings"
	"testing"
	"time"

	pqotp "github.com/pquerna/otp"
	pqtotp "github.com/pquerna/otp/totp"
	verify "github.com/twilio/twilio-go/rest/verify/v2"
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
	identity := "ff483d1f-" + strings.ReplaceAll(newPhone()[1:], "+", "")
	e, err := v2.CreateEntity(s.serviceSID, (&verify.CreateEntityParams{}).SetIdentity(identity))
	if err != nil || str(e.Identity) != identity || !strings.HasPrefix(str(e.Sid), "YE") || str(e.ServiceSid) != s.serviceSID {
		t.Fatalf("create entity: got %+v, %v", e, err)
	}
	_, err = v2.CreateEntity(s.serviceSID, (&verify.CreateEntityParams{}).SetIdentity(identity))
	wantTwilioError(t, "the same identity twice", err, 60200, 400)

	nf, err := v2.CreateNewFactor(s.serviceSID, identity, (&verify.CreateNewFactorParams{}).
		SetFriendlyName("Ana's phone").SetFactorType("totp").SetConfigTimeStep(20))
	if err != nil || str(nf.Status) != "unverified" || !strings.HasPrefix(str(nf.Sid), "YF") || str(nf.FactorType) != "totp" {
		t.Fatalf("create factor: got %+v, %v", nf, err)
	}
	secret, uri := binding(t, nf)
	if len(secret) != 32 || !strings.HasPrefix(uri, "otpauth://totp/Twilio%20clients:Ana%27s%20phone?") || !strings.Contains(uri, "period=20") {
		t.Fatalf("binding: got secret %q uri %q", secret, uri)
	}
	fsid := str(nf.Sid)
	_, err = v2.CreateChallenge(s.serviceSID, identity, (&verify.CreateChallengeParams{}).SetFactorSid(fsid).SetAuthPayload("123456"))
	wantTwilioError(t, "challenge of an unverified factor", err, 60318, 403)

	now := time.Now()
	code := totpCode(t, uri, now)
	wrong := "000000"
	if wrong == code {
		wrong = "000001"
	}
	if f, err := v2.UpdateFactor(s.serviceSID, identity, fsid, (&verify.UpdateFactorParams{}).SetAuthPayload(wrong)); err != nil || str(f.Status) != "unverified" {
		t.Errorf("verify with a wrong code: got %+v, %v; want 200 unverified", f, err)
	}
	if f, err := v2.UpdateFactor(s.serviceSID, identity, fsid, (&verify.UpdateFactorParams{}).SetAuthPayload(code)); err != nil || str(f.Status) != "verified" {
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
	if c := challenge(code); str(c.Status) != "denied" {
		t.Errorf("challenge with the code that verified the factor: got %s, want denied", str(c.Status))
	}
	next := totpCode(t, uri, now.Add(20*time.Second)) // the next step, within the default skew of one
	approved := challenge(next)
	if str(approved.Status) != "approved" || str(approved.FactorSid) != fsid || !strings.HasPrefix(str(approved.Sid), "YC") {
		t.Errorf("challenge with the next code: got %+v, want approved", approved)
	}
	if c := challenge(next); str(c.Status) != "denied" {
		t.Errorf("the next code a second time: got %s, want denied", str(c.Status))
	}
	if c, err := v2.FetchChallenge(s.serviceSID, identity, str(approved.Sid)); err != nil || str(c.Status) != "approved" {
		t.Errorf("fetch challenge: got %+v, %v", c, err)
	}
	list, err := v2.ListChallenge(s.serviceSID, identity, (&verify.ListChallengeParams{}).SetFactorSid(fsid).SetStatus("approved"))
	if err != nil || len(list) != 1 || str(list[0].Sid) != str(approved.Sid) {
		t.Errorf("list approved challenges: got %d (%v), want the one", len(list), err)
	}
	if all, err := v2.ListChallenge(s.serviceSID, identity, (&verify.ListChallengeParams{}).SetPageSize(1)); err != nil || len(all) != 3 {
		t.Errorf("list every challenge one per page: got %d (%v), want 3", len(all), err)
	}

	if f, err := v2.FetchFactor(s.serviceSID, identity, fsid); err != nil || str(f.Status) != "verified" || str(f.FriendlyName) != "Ana's phone" {
		t.Errorf("fetch factor: got %+v, %v", f, err)
	}
	if f, err := v2.UpdateFactor(s.serviceSID, identity, fsid, (&verify.UpdateFactorParams{}).SetFriendlyName("old phone")); err != nil || str(f.FriendlyName) != "old phone" {
		t.Errorf("rename factor: got %+v, %v", f, err)
	}
	if fs, err := v2.ListFactor(s.serviceSID, identity, nil); err != nil || len(fs) != 1 {
		t.Errorf("list factors: got %d (%v), want 1", len(fs), err)
	}
	if es, err := v2.ListEntity(s.serviceSID, nil); err != nil || len(es) == 0 {
		t.Errorf("list entities: got %d (%v)", len(es), err)
	}

	_, err = v2.CreateNewFactor(s.serviceSID, identity, (&verify.CreateNewFactorParams{}).SetFriendlyName("x").SetFactorType("push"))
	wantTwilioError(t, "FactorType=push", err, 60200, 400)
	_, err = v2.CreateNewFactor(s.serviceSID, identity, (&verify.CreateNewFactorParams{}).SetFriendlyName("x").SetFactorType("totp").SetConfigCodeLength(9))
	wantTwilioError(t, "Config.CodeLength=9", err, 60200, 400)
	_, err = v2.UpdateFactor(s.serviceSID, identity, fsid, (&verify.UpdateFactorParams{}).SetConfigSkew(2))
	wantTwilioError(t, "changing Config.Skew", err, 60200, 400)
	_, err = v2.FetchFactor(s.serviceSID, identity, "YF"+strings.Repeat("0", 32))
	wantTwilioError(t, "an unknown factor", err, 20404, 404)

	if err := v2.DeleteFactor(s.serviceSID, identity, fsid); err != nil {
		t.Errorf("delete factor: %v", err)
	}
	if err := v2.DeleteEntity(s.serviceSID, identity); err != nil {
		t.Errorf("delete entity: %v", err)
	}
	_, err = v2.FetchEntity(s.serviceSID, identity)
	wantTwilioError(t, "a deleted entity", err, 20404, 404)
}
