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
	"otpgate/internal/storetest/fixture"
	"otpgate/internal/templates"
)

// testText holds both stores to one answer for text PostgreSQL cannot keep: a NUL
// character or invalid UTF-8 anywhere in what a store is given is *otp.ErrInvalidText,
// classified as invalid input, and nothing is written.
func testText(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	for name, text := range map[string]string{"NUL": "a\x00b", "InvalidUTF8": "a\xffb"} {
		t.Run("AppNameOrTemplate"+name+"IsRefused", func(t *testing.T) {
			e := fixture.New(t, newStore)
			a := fixture.NewApp(fixture.AppA)
			a.Name = text
			fixture.WantInvalidText(t, "CreateApp with the name", e.Store.CreateApp(e.Ctx, a, fixture.Audit(apps.ActionAppCreate)))
			a = fixture.NewApp(fixture.AppA)
			a.Templates = map[string]templates.Message{"en": {SMS: "Your code " + text + " {{.Code}}"}}
			fixture.WantInvalidText(t, "CreateApp with a template", e.Store.CreateApp(e.Ctx, a, fixture.Audit(apps.ActionAppCreate)))
			if _, err := e.Store.AppByID(e.Ctx, fixture.AppA); !errors.Is(err, otp.ErrNotFound) {
				t.Errorf("after the refusals: got %v, want no app", err)
			}
			if err := e.Store.CreateApp(e.Ctx, fixture.NewApp(fixture.AppA), fixture.Audit(apps.ActionAppCreate)); err != nil {
				t.Fatal(err)
			}
			up := fixture.NewApp(fixture.AppA)
			up.Templates = map[string]templates.Message{"en": {SMS: text + " {{.Code}}"}}
			fixture.WantInvalidText(t, "UpdateApp with a template", e.Store.UpdateApp(e.Ctx, up, fixture.Audit(apps.ActionAppUpdate)))
			if got, _ := e.Store.AppByID(e.Ctx, fixture.AppA); len(got.Templates) != 0 {
				t.Errorf("after a refused update: got templates %+v, want none", got.Templates)
			}
			fixture.WantAudits(t, e, 1)
		})

		t.Run("KeyName"+name+"IsRefused", func(t *testing.T) {
			e := fixture.New(t, newStore)
			k := apps.Key{ID: "SK0001", AppID: otp.DefaultAppID, Name: text, Hash: fixture.Hash("s1"), CreatedAt: fixture.Base()}
			fixture.WantInvalidText(t, "CreateKey", e.Store.CreateKey(e.Ctx, k, fixture.Audit(apps.ActionKeyCreate)))
			if keys, err := e.Store.AppKeys(e.Ctx, otp.DefaultAppID); err != nil || len(keys) != 0 {
				t.Errorf("after the refusal: got keys %+v, %v; want none", keys, err)
			}
			fixture.WantAudits(t, e, 0)
		})

		t.Run("AuditText"+name+"IsRefused", func(t *testing.T) {
			e := fixture.New(t, newStore)
			k := apps.Key{ID: "SK0001", AppID: otp.DefaultAppID, Name: "backend", Hash: fixture.Hash("s1"), CreatedAt: fixture.Base()}
			a := fixture.Audit(apps.ActionKeyCreate)
			a.Detail = text
			fixture.WantInvalidText(t, "CreateKey", e.Store.CreateKey(e.Ctx, k, a))
			if keys, _ := e.Store.AppKeys(e.Ctx, otp.DefaultAppID); len(keys) != 0 {
				t.Errorf("after the refusal: got keys %+v, want none", keys)
			}
			fixture.WantAudits(t, e, 0)
		})

		t.Run("TestNumber"+name+"IsRefused", func(t *testing.T) {
			e := fixture.New(t, newStore)
			tn := apps.TestNumber{ID: fixture.NewID(), AppID: otp.DefaultAppID, Address: "qa" + text + "@example.com", Sealed: []byte("s"),
				ExpiresAt: fixture.Base().Add(time.Hour), CreatedAt: fixture.Base()}
			fixture.WantInvalidText(t, "CreateTestNumber", e.Store.CreateTestNumber(e.Ctx, tn, fixture.Audit(apps.ActionTestNumberAdd)))
			if list, _ := e.Store.TestNumbers(e.Ctx, otp.DefaultAppID); len(list) != 0 {
				t.Errorf("after the refusal: got %+v, want none", list)
			}
		})

		t.Run("FraudListNote"+name+"IsRefused", func(t *testing.T) {
			e := fixture.New(t, newStore)
			entry, err := fraud.NewListEntry("block", "", "+8190123", "premium")
			if err != nil {
				t.Fatal(err)
			}
			entry.Note, entry.CreatedAt = text, fixture.Base()
			_, err = e.Store.AddFraudListEntry(e.Ctx, entry, fixture.Action(fraud.ActionListAdded))
			fixture.WantInvalidText(t, "AddFraudListEntry", err)
			if st, _ := e.Store.FraudState(e.Ctx); len(st.Entries) != 0 || st.Version != 0 {
				t.Errorf("after the refusal: got %+v, want no entry at version 0", st)
			}
			_, err = fraud.SeedConfig(e.Ctx, e.Store, map[string]string{"mode": text})
			fixture.WantInvalidText(t, "SeedFraudConfig", err)
			_, err = fraud.UpdateConfig(e.Ctx, e.Store, func(map[string]string) (map[string]string, history.AdminAction, error) {
				return map[string]string{"mode": text}, fixture.Action(fraud.ActionConfigChanged), nil
			})
			fixture.WantInvalidText(t, "UpdateFraudConfig", err)
			if st, _ := e.Store.FraudState(e.Ctx); len(st.Values) != 0 {
				t.Errorf("after the refusals: got settings %+v, want none", st.Values)
			}
		})

		t.Run("WebhookEndpoint"+name+"IsRefused", func(t *testing.T) {
			e := fixture.New(t, newStore)
			id := fixture.NewID()
			err := e.Store.CreateEndpoint(e.Ctx, events.Endpoint{
				ID: id, AppID: otp.DefaultAppID, URL: "http://receiver.test/" + text, SecretSealed: []byte("sealed"),
				Types: events.Types(), CreatedAt: fixture.Base(),
			}, history.AdminAction{Action: "webhook_added", Target: id})
			fixture.WantInvalidText(t, "CreateEndpoint", err)
			if list, _ := e.Store.Endpoints(e.Ctx, otp.DefaultAppID); len(list) != 0 {
				t.Errorf("after the refusal: got %+v, want none", list)
			}
		})

		t.Run("ReceiptProviderID"+name+"IsRefused", func(t *testing.T) {
			e := fixture.New(t, newStore)
			p := fixture.Params("+819012345678", "111111", fixture.Base())
			st := e.Send(p)
			if err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID,
				Status: otp.SendSent, ProviderID: "SM1", Now: fixture.Base()}); err != nil {
				t.Fatal(err)
			}
			for _, r := range []receipt.Receipt{
				{Provider: "test", ProviderID: "SM1" + text, Status: receipt.DeliveryDelivered},
				{Provider: "test", SendID: p.SendID + text, Status: receipt.DeliveryDelivered},
				{Provider: "test", ProviderID: "SM1", Status: receipt.DeliveryUndelivered, Error: text},
			} {
				r.Time = fixture.Base().Add(time.Second)
				m, err := e.Store.MarkDelivery(e.Ctx, r)
				fixture.WantInvalidText(t, "MarkDelivery", err)
				if m != (receipt.Marked{}) {
					t.Errorf("MarkDelivery(%+v): got changed, want nothing", r)
				}
			}
			if r := e.SendRow(p.SendID); r.Delivery != "" {
				t.Errorf("after the refusals: got delivery %q, want none", r.Delivery)
			}
		})
	}
}
