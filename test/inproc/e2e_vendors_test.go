package inproc

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"otpgate/internal/server/servertest"
	"otpgate/internal/sms/smstest"
)

// TestVendorProviders runs the server with a Telnyx, an Infobip and an SNS instance, each
// against its fake, routed JP:telnyx,infobip and US:sns: the configuration is read from
// the environment as an operator writes it, every message reaches the vendor's API as
// that vendor documents it, receipts come back through the public route, a refusal fails
// over and a 5xx from SNS is not resent.
func TestVendorProviders(t *testing.T) {
	tx := smstest.NewTelnyx(t, "KEY-telnyx-e2e")
	ib := smstest.NewInfobip(t, "infobip-e2e-key")
	sn := smstest.NewSNS(t, "eu-central-1", "AKIDEXAMPLE", "sns-e2e-secret")
	hook := servertest.NewProvider(t)
	addr := servertest.FreeAddr(t)
	in := servertest.Start(t, servertest.ProdEnv(t, hook, map[string]string{
		"OTP_HTTP_ADDR": addr, "OTP_PUBLIC_URL": "http://" + addr, "OTP_LIMIT_IP": "off", "SMS_TIMEOUT": "2s",
		"SMS_PROVIDERS": "telnyx,infobip,sns", "SMS_ROUTES": "JP:telnyx,infobip;US:sns",
		"TELNYX_API_KEY": tx.APIKey, "TELNYX_FROM": "+15005550006", "TELNYX_PUBLIC_KEY": tx.PublicKey, "TELNYX_BASE_URL": tx.URL,
		"INFOBIP_BASE_URL": ib.URL, "INFOBIP_API_KEY": ib.APIKey, "INFOBIP_FROM": "OTPGATE", "INFOBIP_WEBHOOK_SECRET": "infobip-e2e-secret",
		"SNS_REGION": sn.Region, "SNS_ACCESS_KEY_ID": sn.AccessKeyID, "SNS_SECRET_ACCESS_KEY": sn.SecretAccessKey, "SNS_ENDPOINT": sn.URL,
	}))
	ctx := context.Background()

	t.Run("TelnyxSendsAndItsWebhookSettlesTheSend", func(t *testing.T) {
		phone := servertest.NewPhone()
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
		got := tx.Received()
		if len(got) != 1 || got[0].To != phone || got[0].WebhookURL != "http://"+addr+"/v1/receipts/telnyx/telnyx" || got[0].Code == "" {
			t.Fatalf("Telnyx got %+v, want one SMS with the code and the webhook URL", got)
		}
		if st, err := tx.Callback(ctx, got[0].ID, "delivery_failed", "40008"); err != nil || st != http.StatusNoContent {
			t.Fatalf("webhook: got %d, %v, want 204", st, err)
		}
		if d := deliveryOf(t, in, phone); d != "undelivered:40008" {
			t.Errorf("got %q, want undelivered:40008", d)
		}
	})

	t.Run("ATelnyxRefusalFailsOverToInfobipWhoseReportSettlesTheSend", func(t *testing.T) {
		tx.Set(smstest.Reply{Status: http.StatusBadRequest})
		defer tx.Set(smstest.Reply{})
		phone := servertest.NewPhone()
		r := servertest.Send(t, in, phone)
		servertest.WantStatus(t, r, http.StatusCreated, "")
		got := ib.Received()
		if len(got) != 1 || "+"+got[0].To != phone || got[0].NotifyURL != "http://"+addr+"/v1/receipts/infobip/infobip" || got[0].Sender != "OTPGATE" {
			t.Fatalf("Infobip got %+v, want one SMS with the notify URL", got)
		}
		if sends := sendsOf(t, in, r.Str("id")); len(sends) != 1 || attemptsOf(sends[0]) != "telnyx:failed,infobip:sent" {
			t.Errorf("got sends %v, want telnyx:failed,infobip:sent", sends)
		}
		if st, err := ib.Callback(ctx, 3, "DELIVERED_TO_HANDSET", got[0].MessageID); err != nil || st != http.StatusNoContent {
			t.Fatalf("report: got %d, %v, want 204", st, err)
		}
		if d := deliveryOf(t, in, phone); d != "delivered" {
			t.Errorf("got %q, want delivered", d)
		}
	})

	t.Run("SNSPublishesAndA5xxIsNotResent", func(t *testing.T) {
		phone := "+1415555" + servertest.NewPhone()[len(servertest.NewPhone())-4:]
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
		if got := sn.Received(); len(got) != 1 || got[0].PhoneNumber != phone || got[0].Attributes["AWS.SNS.SMS.SMSType"] != "Transactional" {
			t.Fatalf("SNS got %+v, want one transactional SMS", got)
		}
		sn.Set(smstest.Reply{Status: http.StatusInternalServerError})
		other := "+1415556" + servertest.NewPhone()[len(servertest.NewPhone())-4:]
		servertest.WantStatus(t, servertest.Send(t, in, other), http.StatusBadGateway, "provider_error")
		if n := sn.Calls(); n != 2 {
			t.Errorf("SNS got %d requests, want 2: the 500 is not retried", n)
		}
		resp, err := servertest.Client.Post(in.API+"/v1/receipts/sns/sns", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("a callback for sns: got %d, want 404: SNS takes none", resp.StatusCode)
		}
	})
}
