package conformance

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"otpgate/internal/server/servertest"
)

// twilioDoc is the subset of Twilio's own Verify v2 OpenAPI document that otpgate serves
// (test/twilio/oai, with its source and licence).
var twilioDoc = sync.OnceValues(func() (*openapi3.T, error) {
	return openapi3.NewLoader().LoadFromFile(filepath.Join("..", "..", "test", "twilio", "oai", "twilio_verify_v2.json"))
})

// wantTwilioShape holds an answer to the named schema of Twilio's document: it
// validates, and it has every property the schema names and no other, so that a field
// left out or misnamed fails too (Twilio's schemas allow extra fields). lists names a
// list field whose items are held to itemSchema the same way.
func wantTwilioShape(t *testing.T, what string, raw []byte, schema, list, itemSchema string) {
	t.Helper()
	doc, err := twilioDoc()
	if err != nil {
		t.Fatalf("load Twilio's document: %v", err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v in %s", what, err, raw)
	}
	check := func(name string, v any) {
		ref := doc.Components.Schemas[name]
		if ref == nil {
			t.Fatalf("%s: no schema %s", what, name)
		}
		if err := ref.Value.VisitJSON(v, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s: not a %s: %v\n%s", what, name, err, raw)
		}
		obj, _ := v.(map[string]any)
		var missing, extra []string
		for p := range ref.Value.Properties {
			if _, ok := obj[p]; !ok {
				missing = append(missing, p)
			}
		}
		for p := range obj {
			if _, ok := ref.Value.Properties[p]; !ok {
				extra = append(extra, p)
			}
		}
		if len(missing)+len(extra) > 0 {
			slices.Sort(missing)
			slices.Sort(extra)
			t.Errorf("%s: as %s, lacks %v and has %v the schema does not name\n%s", what, name, missing, extra, raw)
		}
	}
	check(schema, v)
	if list != "" {
		items, _ := v.(map[string]any)[list].([]any)
		if len(items) == 0 {
			t.Errorf("%s: no %s to check", what, list)
		}
		for _, item := range items {
			check(itemSchema, item)
		}
	}
}

// twilioRaw calls the Twilio API of s with HTTP Basic: a form POST when form is set.
func twilioRaw(t *testing.T, s *twilioSetup, user, pass, method, path string, form url.Values) (int, []byte) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, s.in.API+"/v2"+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.SetBasicAuth(user, pass)
	resp, err := servertest.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// TestTwilioAnswersHaveTwilioShapes holds every resource the adapter serves to the
// schema Twilio's own document gives it.
func TestTwilioAnswersHaveTwilioShapes(t *testing.T) {
	s := newTwilioSetup(t)
	account := func(method, path string, form url.Values) []byte {
		t.Helper()
		status, raw := twilioRaw(t, s, twilioAccountSID, twilioAccountToken, method, path, form)
		if status >= 300 {
			t.Fatalf("%s %s: got %d %s", method, path, status, raw)
		}
		return raw
	}

	raw := account(http.MethodPost, "/Services", url.Values{"FriendlyName": {"Shapes"}})
	wantTwilioShape(t, "Service", raw, "verify.v2.service", "", "")
	var svc struct{ Sid string }
	_ = json.Unmarshal(raw, &svc)
	wantTwilioShape(t, "Service list", account(http.MethodGet, "/Services?PageSize=2", nil), "ListServiceResponse", "services", "verify.v2.service")

	phone := servertest.NewPhone()
	raw = account(http.MethodPost, "/Services/"+svc.Sid+"/Verifications", url.Values{"To": {phone}})
	wantTwilioShape(t, "Verification", raw, "verify.v2.service.verification", "", "")
	var v struct{ Sid string }
	_ = json.Unmarshal(raw, &v)
	wantTwilioShape(t, "Verification fetched", account(http.MethodGet, "/Services/"+svc.Sid+"/Verifications/"+v.Sid, nil),
		"verify.v2.service.verification", "", "")
	raw = account(http.MethodPost, "/Services/"+svc.Sid+"/VerificationCheck", url.Values{"To": {phone}, "Code": {servertest.LastCode(t, s.provider, phone)}})
	wantTwilioShape(t, "VerificationCheck", raw, "verify.v2.service.verification_check", "", "")

	raw = account(http.MethodGet, "/Attempts?VerifyServiceSid="+svc.Sid, nil)
	wantTwilioShape(t, "Attempt list", raw, "ListVerificationAttemptResponse", "attempts", "verify.v2.verification_attempt")
	var attempts struct{ Attempts []struct{ Sid string } }
	_ = json.Unmarshal(raw, &attempts)
	wantTwilioShape(t, "Attempt", account(http.MethodGet, "/Attempts/"+attempts.Attempts[0].Sid, nil), "verify.v2.verification_attempt", "", "")
	wantTwilioShape(t, "Attempts summary", account(http.MethodGet, "/Attempts/Summary?VerifyServiceSid="+svc.Sid, nil),
		"verify.v2.verification_attempts_summary", "", "")
	wantTwilioShape(t, "Template list", account(http.MethodGet, "/Templates", nil), "ListVerificationTemplateResponse", "templates", "verify.v2.verification_template")

	entities := "/Services/" + svc.Sid + "/Entities"
	wantTwilioShape(t, "Entity", account(http.MethodPost, entities, url.Values{"Identity": {"shape-user-0001"}}), "verify.v2.service.entity", "", "")
	wantTwilioShape(t, "Entity fetched", account(http.MethodGet, entities+"/shape-user-0001", nil), "verify.v2.service.entity", "", "")
	wantTwilioShape(t, "Entity list", account(http.MethodGet, entities, nil), "ListEntityResponse", "entities", "verify.v2.service.entity")
	raw = account(http.MethodPost, entities+"/shape-user-0001/Factors", url.Values{"FriendlyName": {"phone"}, "FactorType": {"totp"}})
	wantTwilioShape(t, "New factor", raw, "verify.v2.service.entity.new_factor", "", "")
	var nf struct {
		Sid     string
		Binding struct{ URI string }
	}
	_ = json.Unmarshal(raw, &nf)
	factor := entities + "/shape-user-0001/Factors/" + nf.Sid
	wantTwilioShape(t, "Factor verified", account(http.MethodPost, factor, url.Values{"AuthPayload": {totpCode(t, nf.Binding.URI, time.Now())}}),
		"verify.v2.service.entity.factor", "", "")
	wantTwilioShape(t, "Factor list", account(http.MethodGet, entities+"/shape-user-0001/Factors", nil), "ListFactorResponse", "factors", "verify.v2.service.entity.factor")
	raw = account(http.MethodPost, entities+"/shape-user-0001/Challenges", url.Values{"FactorSid": {nf.Sid}, "AuthPayload": {"000000"}})
	wantTwilioShape(t, "Challenge", raw, "verify.v2.service.entity.challenge", "", "")
	var ch struct{ Sid string }
	_ = json.Unmarshal(raw, &ch)
	wantTwilioShape(t, "Challenge fetched", account(http.MethodGet, entities+"/shape-user-0001/Challenges/"+ch.Sid, nil), "verify.v2.service.entity.challenge", "", "")
	wantTwilioShape(t, "Challenge list", account(http.MethodGet, entities+"/shape-user-0001/Challenges", nil), "ListChallengeResponse", "challenges", "verify.v2.service.entity.challenge")
	raw = account(http.MethodPost, "/Services/"+svc.Sid+"/RateLimits", url.Values{"UniqueName": {"end_user_id"}, "Description": {"per user"}})
	wantTwilioShape(t, "Rate Limit", raw, "verify.v2.service.rate_limit", "", "")
	var rl struct{ Sid string }
	_ = json.Unmarshal(raw, &rl)
	limits := "/Services/" + svc.Sid + "/RateLimits"
	wantTwilioShape(t, "Rate Limit fetched", account(http.MethodGet, limits+"/"+rl.Sid, nil), "verify.v2.service.rate_limit", "", "")
	wantTwilioShape(t, "Rate Limit updated", account(http.MethodPost, limits+"/"+rl.Sid, url.Values{"Description": {"x"}}), "verify.v2.service.rate_limit", "", "")
	wantTwilioShape(t, "Rate Limit list", account(http.MethodGet, limits, nil), "ListRateLimitResponse", "rate_limits", "verify.v2.service.rate_limit")
	raw = account(http.MethodPost, limits+"/"+rl.Sid+"/Buckets", url.Values{"Max": {"3"}, "Interval": {"60"}})
	wantTwilioShape(t, "Bucket", raw, "verify.v2.service.rate_limit.bucket", "", "")
	var b struct{ Sid string }
	_ = json.Unmarshal(raw, &b)
	buckets := limits + "/" + rl.Sid + "/Buckets"
	wantTwilioShape(t, "Bucket fetched", account(http.MethodGet, buckets+"/"+b.Sid, nil), "verify.v2.service.rate_limit.bucket", "", "")
	wantTwilioShape(t, "Bucket updated", account(http.MethodPost, buckets+"/"+b.Sid, url.Values{"Max": {"4"}}), "verify.v2.service.rate_limit.bucket", "", "")
	wantTwilioShape(t, "Bucket list", account(http.MethodGet, buckets, nil), "ListBucketResponse", "buckets", "verify.v2.service.rate_limit.bucket")
	raw = account(http.MethodPost, "/Services/"+svc.Sid+"/Verifications", url.Values{"To": {servertest.NewPhone()}, "RateLimits": {`{"end_user_id":"u1"}`}})
	wantTwilioShape(t, "Verification with RateLimits", raw, "verify.v2.service.verification", "", "")
}
