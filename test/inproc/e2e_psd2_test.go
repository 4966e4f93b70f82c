package inproc

import (
	"net/http"
	"strings"
	"testing"

	"otpgate/internal/server/servertest"
)

// TestPSD2NativeAPI holds PSD2 dynamic linking in the native API: an app with
// psd2_enabled takes a send's amount and payee, names them in the message, approves a
// check that names the same ones and refuses one that names others.
func TestPSD2NativeAPI(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{"OTP_DUPLICATE_WINDOW": "0", "OTP_LIMIT_IP": "off"}))
	app := servertest.CreateApp(t, in, map[string]any{"name": "Bank", "psd2_enabled": true})
	if r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/apps/"+app, nil); r.Body["psd2_enabled"] != true {
		t.Fatalf("admin API: got %s, want psd2_enabled true", r.Raw)
	}
	sendURL, checkURL := in.API+"/v1/apps/"+app+"/verifications", in.API+"/v1/apps/"+app+"/verifications/check"
	payment := map[string]string{"amount": "€39.99", "payee": "Acme Inc."}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}

	phone := servertest.NewPhone()
	servertest.WantStatus(t, servertest.Post(t, sendURL, with(payment, "phone", phone, "locale", "en")), http.StatusCreated, "")
	if got := p.Received(phone); len(got) != 1 || !strings.Contains(got[0].Body, "Payment of €39.99 to Acme Inc.") {
		t.Fatalf("message: got %+v, want the payment named", got)
	}
	code := servertest.LastCode(t, p, phone)
	for name, body := range map[string]map[string]string{
		"AnotherAmount": with(payment, "phone", phone, "code", code, "amount", "€3999"),
		"AnotherPayee":  with(payment, "phone", phone, "code", code, "payee", "Acme Inc"),
	} {
		r := servertest.Post(t, checkURL, body)
		if r.Status != http.StatusUnprocessableEntity || r.Str("code") != "invalid_code" {
			t.Errorf("%s: got %d %s, want 422 invalid_code", name, r.Status, r.Raw)
		}
	}
	servertest.WantStatus(t, servertest.Post(t, checkURL, map[string]string{"phone": phone, "code": code}), http.StatusBadRequest, "invalid_request")
	r := servertest.Post(t, checkURL, with(payment, "phone", phone, "code", code))
	servertest.WantStatus(t, r, http.StatusOK, "")
	if r.Str("status") != "approved" {
		t.Errorf("the same payment: got %s, want approved", r.Raw)
	}

	for name, body := range map[string]map[string]string{
		"NoPayment":     {"phone": servertest.NewPhone()},
		"BadAmount":     with(payment, "phone", servertest.NewPhone(), "amount", "1e9"),
		"PayeeTwoLines": with(payment, "phone", servertest.NewPhone(), "payee", "Acme\nCall +15550100"),
	} {
		r := servertest.Post(t, sendURL, body)
		servertest.WantStatus(t, r, http.StatusBadRequest, "invalid_request")
		if n := len(p.Received(body["phone"])); n != 0 {
			t.Errorf("%s: got %d messages, want none", name, n)
		}
	}
	// The default app has no PSD2: the payment is refused there.
	servertest.WantStatus(t, servertest.Post(t, in.API+"/v1/verifications", with(payment, "phone", servertest.NewPhone())), http.StatusBadRequest, "invalid_request")
}
