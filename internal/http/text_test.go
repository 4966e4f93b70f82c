package http

import (
	"net/http"
	"testing"
)

// TestInvalidTextIsRefused holds every route that reads the request to refusing a NUL or
// invalid UTF-8 in its JSON body, query or path with 400 invalid_request naming the
// field, before the service or the receipts see anything.
func TestInvalidTextIsRefused(t *testing.T) {
	for _, c := range []struct {
		name, method, path, body, field string
	}{
		{"NULInPhone", "POST", "/v1/verifications", `{"phone":"+8190\u00001234"}`, "phone"},
		{"NULInLocale", "POST", "/v1/verifications", `{"phone":"+819012345678","locale":"ja\u0000"}`, "locale"},
		{"NULInCheckCode", "POST", "/v1/verifications/check", `{"phone":"+819012345678","code":"12\u00003456"}`, "code"},
		{"NULInMemberName", "POST", "/v1/verifications", `{"phone":"+819012345678","a\u0000":"x"}`, "name"},
		// encoding/json would read these as U+FFFD; the field is told by where the byte lies.
		{"InvalidUTF8InPhone", "POST", "/v1/verifications", "{\"phone\":\"+8190\xff1234\"}", "phone"},
		{"InvalidUTF8InALaterField", "POST", "/v1/verifications", "{\"phone\":\"+819012345678\",\"locale\":\"j\xc3\"}", "locale"},
		{"InvalidUTF8InCheckCode", "POST", "/v1/verifications/check", "{\"phone\":\"+819012345678\",\"code\":\"12\xe2\x82\"}", "code"},
		{"InvalidUTF8InMemberName", "POST", "/v1/verifications", "{\"phone\":\"+819012345678\",\"a\xff\":\"x\"}", "name"},
		{"InvalidUTF8AfterAReplacementCharacter", "POST", "/v1/verifications", "{\"phone\":\"+819012345678\",\"locale\":\"\uFFFD\",\"channel\":\"s\xffms\"}", "channel"},
		{"NULInQuery", "POST", "/v1/verifications?note=a%00b", `{"phone":"+819012345678"}`, "note"},
		{"InvalidUTF8InQuery", "POST", "/v1/verifications/check?x=%FF", `{"phone":"+819012345678","code":"123456"}`, "x"},
		{"InvalidUTF8InQueryName", "POST", "/v1/verifications?%FF=1", `{"phone":"+819012345678"}`, "name"},
		{"NULInAppPath", "POST", "/v1/apps/a%00b/verifications", `{"phone":"+819012345678"}`, "app"},
		{"InvalidUTF8InAppPath", "POST", "/v1/apps/%C3/verifications/check", `{"phone":"+819012345678","code":"123456"}`, "app"},
		{"NULInReceiptPath", "POST", "/v1/receipts/twilio/jp%00", `MessageSid=SM1`, "instance"},
		{"NULInReceiptQuery", "POST", "/v1/receipts/twilio/jp?MessageSid=SM%00", `MessageSid=SM1`, "MessageSid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, rs := &stubVerifier{}, &stubReceipts{}
			h, _ := newTestServer(t, v, func(d *Deps) { d.Receipts = rs })
			w := do(t, h, request{method: c.method, path: c.path, body: c.body})
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status: got %d, want 400 (%s)", w.Code, w.Body)
			}
			p := decodeProblem(t, w)
			if p.Code != "invalid_request" || p.Errors[c.field] == "" {
				t.Errorf("got %+v, want invalid_request naming %q", p, c.field)
			}
			if len(v.sendCalls()) != 0 || len(v.checks) != 0 || len(rs.got) != 0 {
				t.Errorf("the service or the receipts were called: %d sends, %d checks, %d receipts", len(v.sendCalls()), len(v.checks), len(rs.got))
			}
		})
	}
}
