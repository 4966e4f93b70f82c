package storetest

import (
	"errors"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
	"otpgate/internal/templates"
)

// testText holds both stores to one answer for text PostgreSQL cannot keep: a NUL
// character or invalid UTF-8 anywhere in what a store is given is *otp.ErrInvalidText,
// classified as invalid input, and nothing is written.
func testText(t *testing.T, newStore func(t *testing.T) Stores) {
	action := func(name string) history.AdminAction { return history.AdminAction{Action: name, Detail: "by test"} }
	bad := map[string]string{"NUL": "a\x00b", "InvalidUTF8": "a\xffb"}

	for name, text := range bad {
		t.Run("AppNameOrTemplate"+name+"IsRefused", func(t *testing.T) {
			e := newEnv(t, newStore)
			a := newApp(appA)
			a.Name = text
			wantInvalidText(t, "CreateApp with the name", e.Apps.CreateApp(e.ctx, a, audit(apps.ActionAppCreate)))
			a = newApp(appA)
			a.Templates = map[string]templates.Message{"en": {SMS: "Your code " + text + " {{.Code}}"}}
			wantInvalidText(t, "CreateApp with a template", e.Apps.CreateApp(e.ctx, a, audit(apps.ActionAppCreate)))
			if _, err := e.Apps.AppByID(e.ctx, appA); !errors.Is(err, otp.ErrNotFound) {
				t.Errorf("after the refusals: got %v, want no app", err)
			}
			if err := e.Apps.CreateApp(e.ctx, newApp(appA), audit(apps.ActionAppCreate)); err != nil {
				t.Fatal(err)
			}
			up := newApp(appA)
			up.Templates = map[string]templates.Message{"en": {SMS: text + " {{.Code}}"}}
			wantInvalidText(t, "UpdateApp with a template", e.Apps.UpdateApp(e.ctx, up, audit(apps.ActionAppUpdate)))
			if got, _ := e.Apps.AppByID(e.ctx, appA); len(got.Templates) != 0 {
				t.Errorf("after a refused update: got templates %+v, want none", got.Templates)
			}
			wantAudits(t, e, 1)
		})

		t.Run("KeyName"+name+"IsRefused", func(t *testing.T) {
			e := newEnv(t, newStore)
			k := apps.Key{ID: "SK0001", AppID: otp.DefaultAppID, Name: text, Hash: hash("s1"), CreatedAt: base()}
			wantInvalidText(t, "CreateKey", e.Apps.CreateKey(e.ctx, k, audit(apps.ActionKeyCreate)))
			if keys, err := e.Apps.AppKeys(e.ctx, otp.DefaultAppID); err != nil || len(keys) != 0 {
				t.Errorf("after the refusal: got keys %+v, %v; want none", keys, err)
			}
			wantAudits(t, e, 0)
		})

		t.Run("AuditText"+name+"IsRefused", func(t *testing.T) {
			e := newEnv(t, newStore)
			k := apps.Key{ID: "SK0001", AppID: otp.DefaultAppID, Name: "backend", Hash: hash("s1"), CreatedAt: base()}
			a := audit(apps.ActionKeyCreate)
			a.Detail = text
			wantInvalidText(t, "CreateKey", e.Apps.CreateKey(e.ctx, k, a))
			if keys, _ := e.Apps.AppKeys(e.ctx, otp.DefaultAppID); len(keys) != 0 {
				t.Errorf("after the refusal: got keys %+v, want none", keys)
			}
			wantAudits(t, e, 0)
		})

		t.Run("TestNumber"+name+"IsRefused", func(t *testing.T) {
			e := newEnv(t, newStore)
			tn := apps.TestNumber{ID: newID(), AppID: otp.DefaultAppID, Address: "qa" + text + "@example.com", Sealed: []byte("s"),
				ExpiresAt: base().Add(time.Hour), CreatedAt: base()}
			wantInvalidText(t, "CreateTestNumber", e.Apps.CreateTestNumber(e.ctx, tn, audit(apps.ActionTestNumberAdd)))
			if list, _ := e.Apps.TestNumbers(e.ctx, otp.DefaultAppID); len(list) != 0 {
				t.Errorf("after the refusal: got %+v, want none", list)
			}
		})

		t.Run("FraudListNote"+name+"IsRefused", func(t *testing.T) {
			e := newEnv(t, newStore)
			entry, err := fraud.NewListEntry("block", "", "+8190123", "premium")
			if err != nil {
				t.Fatal(err)
			}
			entry.Note, entry.CreatedAt = text, base()
			_, err = e.Fraud.AddFraudListEntry(e.ctx, entry, action(fraud.ActionListAdded))
			wantInvalidText(t, "AddFraudListEntry", err)
			if st, _ := e.Fraud.FraudState(e.ctx); len(st.Entries) != 0 || st.Version != 0 {
				t.Errorf("after the refusal: got %+v, want no entry at version 0", st)
			}
			_, err = fraud.SeedConfig(e.ctx, e.Fraud, map[string]string{"mode": text})
			wantInvalidText(t, "SeedFraudConfig", err)
			_, err = fraud.UpdateConfig(e.ctx, e.Fraud, func(map[string]string) (map[string]string, history.AdminAction, error) {
				return map[string]string{"mode": text}, action(fraud.ActionConfigChanged), nil
			})
			wantInvalidText(t, "UpdateFraudConfig", err)
			if st, _ := e.Fraud.FraudState(e.ctx); len(st.Values) != 0 {
				t.Errorf("after the refusals: got settings %+v, want none", st.Values)
			}
		})

		t.Run("WebhookEndpoint"+name+"IsRefused", func(t *testing.T) {
			e := newEnv(t, newStore)
			id := newID()
			err := e.Events.CreateEndpoint(e.ctx, events.Endpoint{
				ID: id, AppID: otp.DefaultAppID, URL: "http://receiver.test/" + text, SecretSealed: []byte("sealed"),
				Types: events.Types(), CreatedAt: base(),
			}, history.AdminAction{Action: "webhook_added", Target: id})
			wantInvalidText(t, "CreateEndpoint", err)
			if list, _ := e.Events.Endpoints(e.ctx, otp.DefaultAppID); len(list) != 0 {
				t.Errorf("after the refusal: got %+v, want none", list)
			}
		})

		t.Run("ReceiptProviderID"+name+"IsRefused", func(t *testing.T) {
			e := newEnv(t, newStore)
			p := params("+819012345678", "111111", base())
			st := e.send(p)
			if err := e.Store.FinishSend(e.ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID,
				Status: otp.SendSent, ProviderID: "SM1", Now: base()}); err != nil {
				t.Fatal(err)
			}
			for _, r := range []receipt.Receipt{
				{Provider: "test", ProviderID: "SM1" + text, Status: receipt.DeliveryDelivered},
				{Provider: "test", SendID: p.SendID + text, Status: receipt.DeliveryDelivered},
				{Provider: "test", ProviderID: "SM1", Status: receipt.DeliveryUndelivered, Error: text},
			} {
				r.Time = base().Add(time.Second)
				m, err := e.Receipts.MarkDelivery(e.ctx, r)
				wantInvalidText(t, "MarkDelivery", err)
				if m != (receipt.Marked{}) {
					t.Errorf("MarkDelivery(%+v): got changed, want nothing", r)
				}
			}
			if r := e.sendRow(p.SendID); r.Delivery != "" {
				t.Errorf("after the refusals: got delivery %q, want none", r.Delivery)
			}
		})
	}
}

// wantInvalidText fails unless err is *otp.ErrInvalidText, which otp classifies as invalid input.
func wantInvalidText(t *testing.T, what string, err error) {
	t.Helper()
	var bad *otp.ErrInvalidText
	if !errors.As(err, &bad) || otp.ErrorCode(err) != otp.CodeInvalidRequest {
		t.Errorf("%s: got error %v, want *otp.ErrInvalidText classified %s", what, err, otp.CodeInvalidRequest)
	}
}

// wantAudits fails unless the audit log holds n entries.
func wantAudits(t *testing.T, e *env, n int) {
	t.Helper()
	if got, err := e.History.AdminActions(e.ctx, 10); err != nil || len(got) != n {
		t.Errorf("audit: got %d entries (%v), want %d", len(got), err, n)
	}
}
