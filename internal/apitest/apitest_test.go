package apitest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

const (
	verification = `{"id":"0190a5c2-7b3e-7c1d-9f2a-1b2c3d4e5f60","phone":"+819012345678","channel":"sms","status":"pending",` +
		`"expires_at":"2030-01-02T03:09:05Z","next_resend_at":"2030-01-02T03:05:05Z","sends_left":4}`
	invalid      = `{"type":"urn:otpgate:problem:invalid_request","title":"Invalid request","status":400,"detail":"bad","code":"invalid_request"}`
	limited      = `{"type":"urn:otpgate:problem:rate_limited","title":"Rate limited","status":429,"detail":"later","code":"rate_limited","retry_after_seconds":5,"violations":[{"scope":"phone","limit":1,"window_seconds":60,"retry_after_seconds":5}]}`
	notFound     = `{"type":"urn:otpgate:problem:not_found","title":"Not found","status":404,"detail":"none","code":"not_found"}`
	notAllow     = `{"type":"urn:otpgate:problem:method_not_allowed","title":"Method not allowed","status":405,"detail":"no","code":"method_not_allowed"}`
	unauthorized = `{"type":"urn:otpgate:problem:unauthorized","title":"Unauthorized","status":401,"detail":"send the token","code":"unauthorized"}`
	// twilioNotFound is the Twilio Verify compatible API's error, which no document describes.
	twilioNotFound = `{"code":20404,"message":"The requested resource was not found","more_info":"https://www.twilio.com/docs/errors/20404","status":404}`
)

// exchange builds one exchange; header is "Name: value" lines of the response.
func exchange(method, path, reqBody string, reqHeader map[string]string, status int, ct, body string, header ...string) Exchange {
	r := httptest.NewRequest(method, path, strings.NewReader(reqBody))
	if reqBody != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range reqHeader {
		r.Header.Set(k, v)
	}
	h := http.Header{}
	if ct != "" {
		h.Set("Content-Type", ct)
	}
	for _, l := range header {
		k, v, _ := strings.Cut(l, ": ")
		h.Add(k, v)
	}
	return Exchange{Request: r, RequestBody: []byte(reqBody), Status: status, Header: h, Body: []byte(body)}
}

func TestCheck(t *testing.T) {
	const send, problem, js = "/v1/verifications", "application/problem+json", "application/json"
	phone := `{"phone":"+819012345678"}`
	tests := []struct {
		name string
		doc  *Doc
		x    Exchange
		ok   bool
	}{
		{"CreatedConforms", Public(), exchange("POST", send, phone, nil, 201, js, verification, `RateLimit: "phone-1m";r=0;t=60`, `RateLimit-Policy: "phone-1m";q=1;w=60`), true},
		{"ExtraFieldIsOutside", Public(), exchange("POST", send, phone, nil, 201, js, strings.Replace(verification, `"sends_left":4`, `"sends_left":4,"code":"123456"`, 1)), false},
		{"MissingFieldIsOutside", Public(), exchange("POST", send, phone, nil, 201, js, strings.Replace(verification, `,"sends_left":4`, ``, 1)), false},
		{"UndocumentedStatusIsOutside", Public(), exchange("POST", send, phone, nil, 418, problem, invalid), false},
		{"WrongContentTypeIsOutside", Public(), exchange("POST", send, phone, nil, 400, js, invalid), false},
		{"CodeOfAnotherResponseIsOutside", Public(), exchange("POST", send, phone, nil, 400, problem, strings.ReplaceAll(limited, "429", "400")), false},
		{"ProblemStatusMustBeTheResponses", Public(), exchange("POST", send, `{}`, nil, 400, problem, strings.Replace(invalid, `"status":400`, `"status":422`, 1)), false},
		{"RateLimitedConforms", Public(), exchange("POST", send, phone, nil, 429, problem, limited, "Retry-After: 5"), true},
		{"RateLimitedNeedsRetryAfter", Public(), exchange("POST", send, phone, nil, 429, problem, limited), false},
		{"BadRateLimitHeaderIsOutside", Public(), exchange("POST", send, phone, nil, 201, js, verification, "RateLimit: lots"), false},
		{"RefusedRequestAnswered201IsOutside", Public(), exchange("POST", send, `{"phone":"+819012345678","extra":1}`, nil, 201, js, verification), false},
		{"RefusedRequestAnswered400Conforms", Public(), exchange("POST", send, `{"phone":"+819012345678","extra":1}`, nil, 400, problem, invalid), true},
		{"BadIdempotencyKeyAnswered201IsOutside", Public(), exchange("POST", send, phone, map[string]string{"Idempotency-Key": "é"}, 201, js, verification), false},
		{"UnknownPathNeeds404", Public(), exchange("GET", "/v3/nothing", "", nil, 200, js, `{}`), false},
		{"UnknownPath404Conforms", Public(), exchange("GET", "/v3/nothing", "", nil, 404, problem, notFound), true},
		{"TwilioAPIIsNotChecked", Public(), exchange("GET", "/v2/Services/VA1/Verifications/VE1", "", nil, 404, js, twilioNotFound), true},
		{"TwilioAPIRootIsNotChecked", Public(), exchange("GET", "/v2", "", nil, 404, js, twilioNotFound), true},
		{"PathsLikeTwilioAreChecked", Public(), exchange("GET", "/v2x/nothing", "", nil, 404, js, twilioNotFound), false},
		{"WrongMethodNeeds405", Public(), exchange("GET", send, "", nil, 404, problem, notFound), false},
		{"WrongMethod405Conforms", Public(), exchange("GET", send, "", nil, 405, problem, notAllow, "Allow: POST"), true},
		{"WrongMethod405NeedsAllow", Public(), exchange("GET", send, "", nil, 405, problem, notAllow), false},
		{"AdminWithoutTokenAnswered200IsOutside", Admin(), exchange("GET", "/admin/api/sends", "", nil, 200, js, `{"sends":[],"next_cursor":""}`), false},
		{"AdminWithTokenConforms", Admin(), exchange("GET", "/admin/api/sends", "", map[string]string{"Authorization": "Bearer x"}, 200, js, `{"sends":[],"next_cursor":""}`), true},
		{"AdminBadLimitAnswered200IsOutside", Admin(), exchange("GET", "/admin/api/sends?limit=0", "", map[string]string{"Authorization": "Bearer x"}, 200, js, `{"sends":[],"next_cursor":""}`), false},
		{"ConsolePagesAreNotChecked", Admin(), exchange("GET", "/admin/limits", "", nil, 200, "text/html", "<html>"), true},
		{"EncodedSlashStaysInItsSegment", Admin(), exchange("DELETE", "/admin/api/apps/345fcd43-658f-4f5f-90cb-3391eeaf484d/keys/a%2Fb", "", nil, 401, problem, unauthorized, `WWW-Authenticate: Bearer realm="otpgate-admin"`), true},
		{"UnknownAdminAPIPathNeeds404", Admin(), exchange("GET", "/admin/api/nothing", "", map[string]string{"Authorization": "Bearer x"}, 200, js, `{}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.doc.Check(tt.x)
			if (err == nil) != tt.ok {
				t.Errorf("Check: got %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestCheckResponseIgnoresRefusedRequests(t *testing.T) {
	x := exchange("POST", "/v1/verifications", `{"phone":"+819012345678","extra":1}`, nil, 201, "application/json", verification)
	res, err := Public().CheckResponse(x)
	if err != nil {
		t.Fatalf("CheckResponse: got %v, want nil", err)
	}
	if res.RequestError == nil || res.Operation != "sendVerification" {
		t.Errorf("result: got %+v, want the request refused by sendVerification", res)
	}
}

func TestUnroutedLeavesOutTheTwilioAPI(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		r := Unrouted(Public(), "/").Draw(rt, "request")
		if Public().leftOut(r.Path) {
			rt.Fatalf("got %s %s, want no path under %s", r.Method, r.Path, TwilioPrefix)
		}
	})
}
