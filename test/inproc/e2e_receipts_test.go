package inproc

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"otpgate/internal/server/servertest"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

// deliveryOf is a send's receipt as history shows it: "delivered", "undelivered:<error>" or "".
func deliveryOf(t *testing.T, in *servertest.Instance, address string) string {
	t.Helper()
	r := servertest.SettledSends(t, in, address)
	sends, _ := r.Body["sends"].([]any)
	if len(sends) != 1 {
		t.Fatalf("got %d sends of %s, want 1", len(sends), address)
	}
	s := sends[0].(map[string]any)
	d, _ := s["delivery"].(string)
	if e, _ := s["delivery_error"].(string); e != "" {
		d += ":" + e
	}
	return d
}

func TestDeliveryReceipts(t *testing.T) {
	const sid, token = "AC00000000000000000000000000000abc", "twilio-auth-token"
	f := smstest.NewTwilio(t, sid, token)
	hook := smstest.New(t, "backup-secret")
	addr := servertest.FreeAddr(t)
	in := servertest.Start(t, servertest.ProdEnv(t, hook, map[string]string{
		"OTP_HTTP_ADDR": addr, "OTP_PUBLIC_URL": "http://" + addr,
		"SMS_PROVIDERS": "twilio,backup:webhook", "TWILIO_ACCOUNT_SID": sid, "TWILIO_AUTH_TOKEN": token, "TWILIO_BASE_URL": f.URL,
		"TWILIO_FROM": "+15005550006", "SMS_WEBHOOK_URL_BACKUP": hook.URL, "SMS_WEBHOOK_SECRET_BACKUP": hook.Secret,
		"SMS_ROUTES": "US:backup;*:twilio", "OTP_LIMIT_IP": "off",
	}))
	ctx := context.Background()

	t.Run("TwilioStatusCallbacks", func(t *testing.T) {
		delivered, undelivered, forged := servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone()
		for _, p := range []string{delivered, undelivered, forged} {
			servertest.WantStatus(t, servertest.Send(t, in, p), http.StatusCreated, "")
		}
		sids := map[string]string{}
		for _, r := range f.Received() {
			sids[r.To] = r.SID
			if r.StatusCallback != "http://"+addr+"/v1/receipts/twilio/twilio" {
				t.Fatalf("StatusCallback: got %q", r.StatusCallback)
			}
		}
		for _, c := range []struct{ phone, status, code string }{
			{delivered, "sent", ""}, {delivered, "delivered", ""}, {undelivered, "undelivered", "30003"},
		} {
			if st, err := f.Callback(ctx, sids[c.phone], c.status, c.code); err != nil || st != http.StatusNoContent {
				t.Fatalf("%s %s: got %d, %v, want 204", c.phone, c.status, st, err)
			}
		}
		if got := deliveryOf(t, in, delivered); got != "delivered" {
			t.Errorf("delivered: got %q", got)
		}
		if got := deliveryOf(t, in, undelivered); got != "undelivered:30003" {
			t.Errorf("undelivered: got %q, want undelivered:30003", got)
		}
		// Replayed and late reports change nothing, and are not counted again.
		for _, status := range []string{"delivered", "undelivered", "failed"} {
			if st, _ := f.Callback(ctx, sids[delivered], status, "30008"); st != http.StatusNoContent {
				t.Errorf("replay %s: got %d, want 204", status, st)
			}
		}
		if got := deliveryOf(t, in, delivered); got != "delivered" {
			t.Errorf("after replays: got %q, want still delivered", got)
		}
		// Forged: signed with another token, or over another URL, or not at all.
		u := "http://" + addr + "/v1/receipts/twilio/twilio"
		form := url.Values{"AccountSid": {sid}, "MessageSid": {sids[forged]}, "MessageStatus": {"undelivered"}, "ErrorCode": {"30005"}}
		for name, sig := range map[string]string{
			"WrongToken": sms.TwilioSignature("not-the-token", u, form),
			"OtherURL":   sms.TwilioSignature(token, "http://"+addr+"/v1/receipts/twilio/other", form),
			"None":       "",
		} {
			req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set(sms.TwilioSignatureHeader, sig)
			resp, err := servertest.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s: got %d, want 403", name, resp.StatusCode)
			}
		}
		if got := deliveryOf(t, in, forged); got != "" {
			t.Errorf("forged receipts changed the send: %q", got)
		}
		body := scrapeMetrics(t, in)
		for _, want := range []string{
			`otpgate_deliveries_total{provider="twilio",status="delivered"} 1`,
			`otpgate_deliveries_total{provider="twilio",status="undelivered"} 1`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %q:\n%s", want, grep(body, "otpgate_deliveries_total"))
			}
		}
	})

	t.Run("WebhookReceipts", func(t *testing.T) {
		phone := "+1415555" + servertest.NewPhone()[len(servertest.NewPhone())-4:]
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
		got := hook.Received(phone)
		if len(got) != 1 {
			t.Fatalf("the webhook got %d messages to %s, want 1", len(got), phone)
		}
		body := `{"id":"` + got[0].ID + `","status":"undelivered","error":"handset off"}`
		now := time.Now()
		if st := servertest.PostReceipt(t, in, "backup", body, sms.Sign("other-secret", now, []byte(body))); st != http.StatusForbidden {
			t.Errorf("forged: got %d, want 403", st)
		}
		if st := servertest.PostReceipt(t, in, "backup", body, sms.Sign(hook.Secret, now.Add(-6*time.Minute), []byte(body))); st != http.StatusForbidden {
			t.Errorf("stale: got %d, want 403", st)
		}
		if got := deliveryOf(t, in, phone); got != "" {
			t.Fatalf("forged and stale receipts changed the send: %q", got)
		}
		signed := sms.Sign(hook.Secret, now, []byte(body))
		if st := servertest.PostReceipt(t, in, "backup", body, signed); st != http.StatusNoContent {
			t.Fatalf("genuine: got %d, want 204", st)
		}
		if got := deliveryOf(t, in, phone); got != "undelivered:handset off" {
			t.Errorf("got %q, want undelivered:handset off", got)
		}
		replay := `{"id":"` + got[0].ID + `","status":"delivered"}`
		for _, b := range []string{body, replay} {
			if st := servertest.PostReceipt(t, in, "backup", b, sms.Sign(hook.Secret, now, []byte(b))); st != http.StatusNoContent {
				t.Errorf("replay: got %d, want 204", st)
			}
		}
		if got := deliveryOf(t, in, phone); got != "undelivered:handset off" {
			t.Errorf("after replays: got %q, want the first receipt to stand", got)
		}
		if st := servertest.PostReceipt(t, in, "nobody", body, signed); st != http.StatusNotFound {
			t.Errorf("unknown instance: got %d, want 404", st)
		}
		if st := servertest.PostReceipt(t, in, "backup", `{"id":"x","status":"sent"}`, sms.Sign(hook.Secret, now, []byte(`{"id":"x","status":"sent"}`))); st != http.StatusBadRequest {
			t.Errorf("malformed: got %d, want 400", st)
		}
		if want := `otpgate_deliveries_total{provider="backup",status="undelivered"} 1`; !strings.Contains(scrapeMetrics(t, in), want) {
			t.Errorf("metrics lack %q", want)
		}
	})

	t.Run("ConsoleShowsDeliveryRates", func(t *testing.T) {
		r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/delivery?since=1h", nil)
		servertest.WantStatus(t, r, http.StatusOK, "")
		if !strings.Contains(r.Raw, `{"channel":"sms","country":"JP","provider":"twilio","sends":3,"sent":3,"delivered":1,"undelivered":1,"segments":3,"delivery_rate":0.5}`) ||
			!strings.Contains(r.Raw, `{"channel":"sms","country":"US","provider":"backup","sends":1,"sent":1,"delivered":0,"undelivered":1,"segments":1,"delivery_rate":0}`) {
			t.Errorf("got %s, want JP by twilio at 50%% and US by backup at 0%%", r.Raw)
		}
	})

	// Last, as it adds sends to the rates above.
	t.Run("TwilioReportsThePrice", func(t *testing.T) {
		priced, nul, garbled := servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone()
		for _, p := range []string{priced, nul, garbled} {
			servertest.WantStatus(t, servertest.Send(t, in, p), http.StatusCreated, "")
		}
		sids := map[string]string{}
		for _, r := range f.Received() {
			sids[r.To] = r.SID
		}
		warned := func() int { return strings.Count(in.Stderr.String(), "the provider's price is ignored") }
		before := warned()
		for _, c := range []struct {
			phone, status, price string
		}{
			{priced, "sent", ""}, // Twilio's price is empty until it is known
			{priced, "delivered", "-0.00750"},
			{priced, "delivered", "-0.01000"}, // a replay with another price changes nothing
			{nul, "delivered", "-0.0075\x00"},
			{garbled, "undelivered", "abc"},
		} {
			st, err := f.CallbackWith(ctx, sids[c.phone], c.status, url.Values{"Price": {c.price}, "PriceUnit": {"USD"}})
			if err != nil || st != http.StatusNoContent {
				t.Fatalf("%s %s with price %q: got %d, %v, want 204", c.phone, c.status, c.price, st, err)
			}
		}
		sendOf := func(phone string) map[string]any {
			sends, _ := servertest.SettledSends(t, in, phone).Body["sends"].([]any)
			if len(sends) != 1 {
				t.Fatalf("got %d sends of %s, want 1", len(sends), phone)
			}
			return sends[0].(map[string]any)
		}
		s := sendOf(priced)
		if s["delivery"] != "delivered" || s["actual_cost"] != "0.0075" || s["actual_currency"] != "USD" ||
			s["cost"] == nil || s["currency"] != "USD" {
			t.Errorf("priced send: got delivery %v, cost %v %v, actual %v %v; want delivered, the estimate and 0.0075 USD",
				s["delivery"], s["cost"], s["currency"], s["actual_cost"], s["actual_currency"])
		}
		for phone, want := range map[string]string{nul: "delivered", garbled: "undelivered"} {
			if s := sendOf(phone); s["delivery"] != want || s["actual_cost"] != nil || s["actual_currency"] != nil {
				t.Errorf("send with a bad price: got delivery %v, actual %v %v; want %s and no actual price",
					s["delivery"], s["actual_cost"], s["actual_currency"], want)
			}
		}
		if got := warned() - before; got != 2 {
			t.Errorf("got %d warnings about ignored prices, want one per bad callback (2)", got)
		}
		want := `otpgate_spend_actual_total{app="00000000-0000-0000-0000-000000000001",channel="sms",country="JP",currency="USD"} 0.0075`
		if body := scrapeMetrics(t, in); !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, grep(body, "otpgate_spend_actual_total"))
		}
	})
}
