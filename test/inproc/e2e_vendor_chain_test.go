package inproc

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"otpgate/internal/server/servertest"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

// TestSMSVendorsThroughTheServer runs one chain over the three SMS vendors' fakes,
// vonage,plivo,sinch: each takes a message when the ones before it definitely refuse,
// each one's signed receipt settles the send it took through the public receipt route,
// a forged one does not, and an unknown outcome at the first is sent nowhere else.
func TestSMSVendorsThroughTheServer(t *testing.T) {
	vonage := smstest.NewVonage(t, smstest.VonageAccount{APIKey: "abcd1234", APISecret: "abcdef0123456789",
		SignatureSecret: "vonage-signature-secret", SignatureMethod: sms.VonageSHA256HMAC})
	plivo := smstest.NewPlivo(t, smstest.PlivoAccount{AuthID: "MAXXXXXXXXXXXXXXXXXX", AuthToken: "plivo-token", SignV3: true})
	sinch := smstest.NewSinch(t, smstest.SinchPlan{ServicePlanID: "plan1", APIToken: "sinch-token", CallbackSecret: "sinch-hmac"})
	hook := smstest.New(t, "unused-secret")
	addr := servertest.FreeAddr(t)
	in := servertest.Start(t, servertest.ProdEnv(t, hook, map[string]string{
		"OTP_HTTP_ADDR": addr, "OTP_PUBLIC_URL": "http://" + addr, "OTP_LIMIT_IP": "off",
		"SMS_PROVIDERS": "vonage,plivo,sinch", "SMS_ROUTES": "vonage,plivo,sinch",
		"VONAGE_API_KEY": vonage.APIKey, "VONAGE_API_SECRET": vonage.APISecret, "VONAGE_FROM": "Example",
		"VONAGE_SIGNATURE_SECRET": vonage.SignatureSecret, "VONAGE_SIGNATURE_METHOD": "sha256", "VONAGE_BASE_URL": vonage.URL,
		"PLIVO_AUTH_ID": plivo.AuthID, "PLIVO_AUTH_TOKEN": plivo.AuthToken, "PLIVO_FROM": "+14155550100", "PLIVO_BASE_URL": plivo.URL,
		"SINCH_SERVICE_PLAN_ID": sinch.ServicePlanID, "SINCH_API_TOKEN": sinch.APIToken, "SINCH_CALLBACK_SECRET": sinch.CallbackSecret,
		"SINCH_BASE_URL": sinch.URL,
	}))
	ctx := context.Background()
	base := "http://" + addr + "/v1/receipts/"

	t.Run("VonageTakesItAndItsSignedReceiptSettlesIt", func(t *testing.T) {
		phone := servertest.NewPhone()
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
		got := vonage.Received()
		if len(got) != 1 || got[0].To != strings.TrimPrefix(phone, "+") || got[0].Callback != base+"vonage/vonage" {
			t.Fatalf("vonage got %+v, want one message to %s asking for receipts at %svonage/vonage", got, phone, base)
		}
		params, callback, err := vonage.ReceiptParams(got[0].IDs[0], "failed", "6")
		if err != nil {
			t.Fatal(err)
		}
		params["sig"] = sms.VonageSignature("not-the-secret", sms.VonageSHA256HMAC, params)
		if st, err := vonage.PostReceipt(ctx, callback, params); err != nil || st != http.StatusForbidden {
			t.Errorf("forged: got %d, %v, want 403", st, err)
		}
		if st, err := vonage.Receipt(ctx, got[0].IDs[0], "delivered", ""); err != nil || st != http.StatusNoContent {
			t.Fatalf("genuine: got %d, %v, want 204", st, err)
		}
		if d := deliveryOf(t, in, phone); d != "delivered" {
			t.Errorf("got %q, want delivered", d)
		}
	})

	t.Run("AVonageRefusalGoesToPlivo", func(t *testing.T) {
		vonage.Refuse("9", "Partner Quota Violation")
		phone := servertest.NewPhone()
		r := servertest.Send(t, in, phone)
		servertest.WantStatus(t, r, http.StatusCreated, "")
		if a := attemptsOf(sendsOf(t, in, r.Str("id"))[0]); a != "vonage:failed,plivo:sent" {
			t.Errorf("attempts: got %q, want vonage:failed,plivo:sent", a)
		}
		got := plivo.Received()
		if len(got) != 1 || got[0].CallbackURL != base+"plivo/plivo" || got[0].Method != "POST" {
			t.Fatalf("plivo got %+v, want one message asking for callbacks at %splivo/plivo", got, base)
		}
		if st, err := plivo.Receipt(ctx, got[0].UUID, "undelivered", "50"); err != nil || st != http.StatusNoContent {
			t.Fatalf("genuine: got %d, %v, want 204", st, err)
		}
		if d := deliveryOf(t, in, phone); d != "undelivered:50" {
			t.Errorf("got %q, want undelivered:50", d)
		}
	})

	t.Run("APlivoRefusalGoesToSinch", func(t *testing.T) {
		plivo.Set(smstest.Reply{Status: http.StatusBadRequest})
		phone := servertest.NewPhone()
		r := servertest.Send(t, in, phone)
		servertest.WantStatus(t, r, http.StatusCreated, "")
		if a := attemptsOf(sendsOf(t, in, r.Str("id"))[0]); a != "vonage:failed,plivo:failed,sinch:sent" {
			t.Errorf("attempts: got %q, want vonage:failed,plivo:failed,sinch:sent", a)
		}
		got := sinch.Received()
		if len(got) != 1 || got[0].To != phone || got[0].CallbackURL != base+"sinch/sinch" {
			t.Fatalf("sinch got %+v, want one batch to %s asking for reports at %ssinch/sinch", got, phone, base)
		}
		servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": got[0].Code}), http.StatusOK, "")
		if st, err := sinch.Report(ctx, got[0].ID, "Failed", 402); err != nil || st != http.StatusNoContent {
			t.Fatalf("genuine: got %d, %v, want 204", st, err)
		}
		if d := deliveryOf(t, in, phone); d != "undelivered:402" {
			t.Errorf("got %q, want undelivered:402", d)
		}
	})

	t.Run("AnUnknownOutcomeIsSentNowhereElse", func(t *testing.T) {
		vonage.Refuse("", "")
		vonage.Set(smstest.Reply{Status: http.StatusServiceUnavailable})
		plivos, sinchs := len(plivo.Received()), len(sinch.Received())
		phone := servertest.NewPhone()
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusBadGateway, "provider_error")
		if len(plivo.Received()) != plivos || len(sinch.Received()) != sinchs {
			t.Errorf("plivo and sinch got %d and %d more, want none: vonage may still deliver", len(plivo.Received())-plivos, len(sinch.Received())-sinchs)
		}
		if rows := servertest.SettledSends(t, in, phone); !strings.Contains(rows.Raw, `"attempts":[{"provider":"vonage","outcome":"unknown"`) {
			t.Errorf("history: got %s, want one unknown attempt at vonage", rows.Raw)
		}
	})
}
