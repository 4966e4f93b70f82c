package appstest

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
	"otpgate/internal/templates"
)

func testApps(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("CreatedAppIsLoadedAndVersionGrows", func(t *testing.T) {
		e := fixture.New(t, newStore)
		before, err := e.Store.SettingVersion(e.Ctx, apps.SettingName)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Store.CreateApp(e.Ctx, fixture.NewApp(fixture.AppA), fixture.Audit(apps.ActionAppCreate)); err != nil {
			t.Fatalf("CreateApp: %v", err)
		}
		set, err := e.Store.LoadApps(e.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		if set.Version <= before || len(set.Apps) != 1 {
			t.Fatalf("got version %d (before %d) and %d apps, want a later version and 1 app", set.Version, before, len(set.Apps))
		}
		got, want := set.Apps[0], fixture.NewApp(fixture.AppA)
		if got.ID != want.ID || got.Name != want.Name || got.CodeLength != 8 || got.CodeTTL != want.CodeTTL ||
			got.MaxSends != 2 || got.MaxAttempts != 4 || got.Access != otp.AccessKey || got.SendRules.String() != "1/1m" ||
			len(got.CheckRules) != 0 || len(got.Locales) != 1 || got.AllowedCountries[0] != "JP" || !got.CreatedAt.Equal(fixture.Base()) {
			t.Errorf("got %+v, want %+v", got, want)
		}
		if v, _ := e.Store.SettingVersion(e.Ctx, apps.SettingName); v != set.Version {
			t.Errorf("AppsVersion: got %d, want %d", v, set.Version)
		}
		actions, _ := e.Store.AdminActions(e.Ctx, 10)
		if len(actions) != 1 || actions[0].Action != apps.ActionAppCreate {
			t.Errorf("got audit %+v, want one app_create", actions)
		}
	})

	t.Run("MessageSettingsAreKept", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a := fixture.NewApp(fixture.AppA)
		a.Templates = map[string]templates.Message{
			"ja": {SMS: "{{.App}}のコード {{.Code}}"},
			"en": {EmailSubject: "Your {{.App}} code", EmailHTML: "<p>{{.Code}}</p>"},
		}
		a.WebOTPDomain, a.AndroidAppHash = "login.example.com", "FA+9qCX9VSu"
		if err := e.Store.CreateApp(e.Ctx, a, fixture.Audit(apps.ActionAppCreate)); err != nil {
			t.Fatalf("CreateApp: %v", err)
		}
		got, err := e.Store.AppByID(e.Ctx, fixture.AppA)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Templates, a.Templates) || got.WebOTPDomain != a.WebOTPDomain || got.AndroidAppHash != a.AndroidAppHash {
			t.Errorf("got templates %+v, WebOTP %q, hash %q, want %+v, %q, %q", got.Templates, got.WebOTPDomain, got.AndroidAppHash,
				a.Templates, a.WebOTPDomain, a.AndroidAppHash)
		}
		bad := got
		bad.Templates = map[string]templates.Message{"en": {SMS: "{{.Nope}}"}}
		err = e.Store.UpdateApp(e.Ctx, bad, fixture.Audit(apps.ActionAppUpdate))
		fixture.WantInvalid(t, "UpdateApp", err, "templates.en.sms")
		if again, _ := e.Store.AppByID(e.Ctx, fixture.AppA); !reflect.DeepEqual(again.Templates, a.Templates) {
			t.Errorf("after a refused update: got %+v, want %+v", again.Templates, a.Templates)
		}
	})

	t.Run("InvalidAppIsRefusedAndNothingIsWritten", func(t *testing.T) {
		e := fixture.New(t, newStore)
		bad := fixture.NewApp(fixture.AppA)
		bad.CodeLength = 3
		err := e.Store.CreateApp(e.Ctx, bad, fixture.Audit(apps.ActionAppCreate))
		fixture.WantInvalid(t, "CreateApp", err, "code_length")
		if set, _ := e.Store.LoadApps(e.Ctx); len(set.Apps) != 0 {
			t.Errorf("got %d apps, want none", len(set.Apps))
		}
		if actions, _ := e.Store.AdminActions(e.Ctx, 10); len(actions) != 0 {
			t.Errorf("got audit %+v, want none", actions)
		}
	})

	t.Run("BrowserSettingsAreKept", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a := fixture.NewApp(fixture.AppA)
		a.Access, a.AllowedOrigins = otp.AccessPublic, []string{"https://shop.example.com", "http://localhost:3000"}
		a.TokenTTL, a.TokenAddress = 90*time.Second, otp.TokenAddressIndex
		if err := e.Store.CreateApp(e.Ctx, a, fixture.Audit(apps.ActionAppCreate)); err != nil {
			t.Fatalf("CreateApp: %v", err)
		}
		got, err := e.Store.AppByID(e.Ctx, fixture.AppA)
		want := []string{"http://localhost:3000", "https://shop.example.com"}
		if err != nil || !reflect.DeepEqual(got.AllowedOrigins, want) || got.TokenTTL != a.TokenTTL || got.TokenAddress != a.TokenAddress {
			t.Fatalf("got origins %v, token TTL %s, address %q (%v); want %v, %s, %q", got.AllowedOrigins, got.TokenTTL, got.TokenAddress, err, want, a.TokenTTL, a.TokenAddress)
		}
		got.AllowedOrigins, got.TokenTTL, got.TokenAddress = nil, 0, ""
		if err := e.Store.UpdateApp(e.Ctx, got, fixture.Audit(apps.ActionAppUpdate)); err != nil {
			t.Fatal(err)
		}
		if again, _ := e.Store.AppByID(e.Ctx, fixture.AppA); again.AllowedOrigins != nil || again.TokenTTL != otp.DefaultTokenTTL || again.TokenAddress != otp.TokenAddressPlain {
			t.Errorf("after clearing: got origins %v, token TTL %s, address %q; want none and the defaults", again.AllowedOrigins, again.TokenTTL, again.TokenAddress)
		}
		bad := fixture.NewApp(fixture.AppB)
		bad.AllowedOrigins = []string{"https://shop.example.com"}
		err = e.Store.CreateApp(e.Ctx, bad, fixture.Audit(apps.ActionAppCreate))
		fixture.WantInvalid(t, "CreateApp of a key app with origins", err, "allowed_origins")
	})

}

// testAppChanges holds the cases of testApps that update and delete apps and revoke and touch keys.
func testAppChanges(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("UpdateAndDelete", func(t *testing.T) {
		e := fixture.New(t, newStore)
		if err := e.Store.CreateApp(e.Ctx, fixture.NewApp(fixture.AppA), fixture.Audit(apps.ActionAppCreate)); err != nil {
			t.Fatal(err)
		}
		k := apps.Key{ID: "SK0001", AppID: fixture.AppA, Hash: fixture.Hash("s1"), CreatedAt: fixture.Base()}
		if err := e.Store.CreateKey(e.Ctx, k, fixture.Audit(apps.ActionKeyCreate)); err != nil {
			t.Fatal(err)
		}
		up := fixture.NewApp(fixture.AppA)
		up.Name, up.Access = "Shop 2", otp.AccessPublic
		if err := e.Store.UpdateApp(e.Ctx, up, fixture.Audit(apps.ActionAppUpdate)); err != nil {
			t.Fatalf("UpdateApp: %v", err)
		}
		if a, err := e.Store.AppByID(e.Ctx, fixture.AppA); err != nil || a.Name != "Shop 2" || a.Access != otp.AccessPublic {
			t.Errorf("AppByID: got %+v, %v, want the update", a, err)
		}
		fixture.WantNotFound(t, "UpdateApp(unknown)", e.Store.UpdateApp(e.Ctx, fixture.NewApp(fixture.AppB), fixture.Audit(apps.ActionAppUpdate)))
		if err := e.Store.DeleteApp(e.Ctx, fixture.AppA, fixture.Base(), fixture.Audit(apps.ActionAppDelete)); err != nil {
			t.Fatalf("DeleteApp: %v", err)
		}
		_, err := e.Store.AppByID(e.Ctx, fixture.AppA)
		fixture.WantNotFound(t, "AppByID(deleted)", err)
		fixture.WantNotFound(t, "DeleteApp(again)", e.Store.DeleteApp(e.Ctx, fixture.AppA, fixture.Base(), fixture.Audit(apps.ActionAppDelete)))
		set, _ := e.Store.LoadApps(e.Ctx)
		if len(set.Apps) != 0 || len(set.Keys) != 0 {
			t.Errorf("after delete: got %d apps %d keys, want none: its keys are revoked", len(set.Apps), len(set.Keys))
		}
		keys, _ := e.Store.AppKeys(e.Ctx, fixture.AppA)
		if len(keys) != 1 || !keys[0].Revoked() {
			t.Errorf("AppKeys: got %+v, want the one key, revoked", keys)
		}
	})

	t.Run("KeysAreRevokedAndTouched", func(t *testing.T) {
		e := fixture.New(t, newStore)
		k := apps.Key{ID: "SK0002", AppID: otp.DefaultAppID, Name: "backend", Hash: fixture.Hash("s2"), TrustedClientIP: true, CreatedAt: fixture.Base()}
		if err := e.Store.CreateKey(e.Ctx, k, fixture.Audit(apps.ActionKeyCreate)); err != nil {
			t.Fatal(err)
		}
		used := fixture.Base().Add(time.Minute)
		if err := e.Store.TouchKeys(e.Ctx, map[string]time.Time{k.ID: used, "SKunknown": used}); err != nil {
			t.Fatalf("TouchKeys: %v", err)
		}
		set, _ := e.Store.LoadApps(e.Ctx)
		if len(set.Keys) != 1 {
			t.Fatalf("got %d keys, want 1", len(set.Keys))
		}
		got := set.Keys[0]
		if got.ID != k.ID || !bytes.Equal(got.Hash, k.Hash) || !got.TrustedClientIP || got.Name != "backend" || !got.LastUsedAt.Equal(used) {
			t.Errorf("got %+v, want %+v last used %v", got, k, used)
		}
		err := e.Store.RevokeKey(e.Ctx, fixture.AppA, k.ID, fixture.Base(), fixture.Audit(apps.ActionKeyRevoke))
		fixture.WantNotFound(t, "RevokeKey(other app)", err)
		if err := e.Store.RevokeKey(e.Ctx, otp.DefaultAppID, k.ID, fixture.Base(), fixture.Audit(apps.ActionKeyRevoke)); err != nil {
			t.Fatalf("RevokeKey: %v", err)
		}
		if !errors.Is(e.Store.RevokeKey(e.Ctx, otp.DefaultAppID, k.ID, fixture.Base(), fixture.Audit(apps.ActionKeyRevoke)), otp.ErrNotFound) {
			t.Errorf("RevokeKey(again): want ErrNotFound")
		}
		if set, _ := e.Store.LoadApps(e.Ctx); len(set.Keys) != 0 {
			t.Errorf("got %d live keys after revoking, want 0", len(set.Keys))
		}
	})
}
