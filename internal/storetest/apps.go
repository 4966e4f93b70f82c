package storetest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"reflect"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/templates"
)

// appA and appB are two apps besides the default one.
const (
	appA = "0190a000-0000-7000-8000-00000000000a"
	appB = "0190a000-0000-7000-8000-00000000000b"
)

func testAppScope(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Run("EachAppHasItsOwnPendingVerificationPerPhone", func(t *testing.T) {
		e := newEnv(t, newStore)
		pa, pb := params("+819012345678", "111111", base()), params("+819012345678", "222222", base())
		pa.AppID, pb.AppID = appA, appB
		a, b := e.send(pa), e.send(pb)
		if !a.Created || !b.Created || a.Verification.ID == b.Verification.ID {
			t.Fatalf("got created %v/%v ids %s/%s, want two new verifications", a.Created, b.Created, a.Verification.ID, b.Verification.ID)
		}
		if a.Verification.AppID != appA || e.verification(b.Verification.ID).AppID != appB {
			t.Errorf("got apps %s/%s, want %s/%s", a.Verification.AppID, e.verification(b.Verification.ID).AppID, appA, appB)
		}
		if r := e.sendRow(pb.SendID); r.AppID != appB {
			t.Errorf("send row: got app %q, want %q", r.AppID, appB)
		}
		def := e.send(params("+819012345678", "333333", base()))
		if !def.Created || def.Verification.AppID != otp.DefaultAppID {
			t.Errorf("send without app: got created %v app %q, want a new verification of the default app", def.Created, def.Verification.AppID)
		}
	})

	t.Run("CheckFindsOnlyTheAppsVerifications", func(t *testing.T) {
		e := newEnv(t, newStore)
		pa := params("+819012345678", "111111", base())
		pa.AppID = appA
		v := e.send(pa).Verification
		for name, ref := range map[string]otp.CheckRef{
			"ByIDOfOtherApp":    {AppID: appB, ID: v.ID, Now: base()},
			"ByPhoneOfOtherApp": {AppID: appB, Phone: v.Address, Now: base()},
			"ByIDOfDefaultApp":  {ID: v.ID, Now: base()},
		} {
			_, _, err := e.Store.Check(e.ctx, ref, decideCode("111111", base()))
			wantNotFound(t, name, err)
		}
		got, oc, err := e.Store.Check(e.ctx, otp.CheckRef{AppID: appA, Phone: v.Address, Now: base()}, decideCode("111111", base()))
		if err != nil || oc != otp.OutcomeApproved || got.ID != v.ID {
			t.Errorf("by phone in its app: got %s %s %v, want %s approved", got.ID, oc, err, v.ID)
		}
	})

	t.Run("CanceledIsAnOutcome", func(t *testing.T) {
		e := newEnv(t, newStore)
		v := e.send(params("+819012345678", "111111", base())).Verification
		got, oc, err := e.Store.Check(e.ctx, otp.CheckRef{ID: v.ID, Now: base()}, func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
			v.Status = otp.StatusCanceled
			return v, otp.OutcomeCanceled
		})
		if err != nil || oc != otp.OutcomeCanceled || got.Status != otp.StatusCanceled || !got.ClosedAt.Equal(base()) {
			t.Fatalf("got %s %s closed %v, err %v; want canceled at %v", got.Status, oc, got.ClosedAt, err, base())
		}
	})

	t.Run("HistoryAndStatsFilterByApp", func(t *testing.T) {
		e := newEnv(t, newStore)
		pa := params("+819012345678", "111111", base())
		pa.AppID = appA
		e.send(pa)
		e.send(params("+819012345679", "222222", base()))
		e.Denied.RecordDenied(otp.DeniedSend{ID: newID(), AppID: appA, Phone: "+819012345670", Status: otp.SendBlocked, Reason: "phone 1/1m", Time: base()})
		e.flush()
		rows, _, err := e.History.ListSends(e.ctx, history.SendFilter{AppID: appA})
		if err != nil || len(rows) != 2 {
			t.Fatalf("ListSends(app A): got %d rows, err %v, want 2", len(rows), err)
		}
		for _, r := range rows {
			if r.AppID != appA {
				t.Errorf("got a row of app %q, want only %q", r.AppID, appA)
			}
		}
		buckets, err := e.History.Stats(e.ctx, base(), time.Hour, appA)
		if err != nil || len(buckets) == 0 {
			t.Fatalf("Stats(app A): %v", err)
		}
		b := buckets[0]
		if b.Sends != 1 || b.Blocked["phone 1/1m"] != 1 {
			t.Errorf("Stats(app A): got sends %d blocked %v, want 1 and 1", b.Sends, b.Blocked)
		}
		all, err := e.History.Stats(e.ctx, base(), time.Hour, "")
		if err != nil || all[0].Sends != 2 {
			t.Errorf("Stats(all): got %+v, %v, want 2 sends", all, err)
		}
	})
}

func newApp(id string) otp.App {
	return otp.App{
		ID: id, Name: "Shop", CodeLength: 8, CodeTTL: 3 * time.Minute, MaxSends: 2, MaxAttempts: 4,
		Locales: []string{"ja"}, AllowedCountries: []string{"JP"}, Channels: []string{"sms"},
		SendRules: rate.Rules{{Limit: 1, Window: time.Minute}}, Access: otp.AccessKey,
		CreatedAt: base(), UpdatedAt: base(),
	}
}

func audit(action string) history.AdminAction {
	return history.AdminAction{Action: action, Target: "app:test"}
}

func testApps(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Run("CreatedAppIsLoadedAndVersionGrows", func(t *testing.T) {
		e := newEnv(t, newStore)
		before, err := e.Apps.SettingVersion(e.ctx, apps.SettingName)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Apps.CreateApp(e.ctx, newApp(appA), audit(apps.ActionAppCreate)); err != nil {
			t.Fatalf("CreateApp: %v", err)
		}
		set, err := e.Apps.LoadApps(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if set.Version <= before || len(set.Apps) != 1 {
			t.Fatalf("got version %d (before %d) and %d apps, want a later version and 1 app", set.Version, before, len(set.Apps))
		}
		got, want := set.Apps[0], newApp(appA)
		if got.ID != want.ID || got.Name != want.Name || got.CodeLength != 8 || got.CodeTTL != want.CodeTTL ||
			got.MaxSends != 2 || got.MaxAttempts != 4 || got.Access != otp.AccessKey || got.SendRules.String() != "1/1m" ||
			len(got.CheckRules) != 0 || len(got.Locales) != 1 || got.AllowedCountries[0] != "JP" || !got.CreatedAt.Equal(base()) {
			t.Errorf("got %+v, want %+v", got, want)
		}
		if v, _ := e.Apps.SettingVersion(e.ctx, apps.SettingName); v != set.Version {
			t.Errorf("AppsVersion: got %d, want %d", v, set.Version)
		}
		actions, _ := e.History.AdminActions(e.ctx, 10)
		if len(actions) != 1 || actions[0].Action != apps.ActionAppCreate {
			t.Errorf("got audit %+v, want one app_create", actions)
		}
	})

	t.Run("MessageSettingsAreKept", func(t *testing.T) {
		e := newEnv(t, newStore)
		a := newApp(appA)
		a.Templates = map[string]templates.Message{
			"ja": {SMS: "{{.App}}のコード {{.Code}}"},
			"en": {EmailSubject: "Your {{.App}} code", EmailHTML: "<p>{{.Code}}</p>"},
		}
		a.WebOTPDomain, a.AndroidAppHash = "login.example.com", "FA+9qCX9VSu"
		if err := e.Apps.CreateApp(e.ctx, a, audit(apps.ActionAppCreate)); err != nil {
			t.Fatalf("CreateApp: %v", err)
		}
		got, err := e.Apps.AppByID(e.ctx, appA)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Templates, a.Templates) || got.WebOTPDomain != a.WebOTPDomain || got.AndroidAppHash != a.AndroidAppHash {
			t.Errorf("got templates %+v, WebOTP %q, hash %q, want %+v, %q, %q", got.Templates, got.WebOTPDomain, got.AndroidAppHash,
				a.Templates, a.WebOTPDomain, a.AndroidAppHash)
		}
		bad := got
		bad.Templates = map[string]templates.Message{"en": {SMS: "{{.Nope}}"}}
		err = e.Apps.UpdateApp(e.ctx, bad, audit(apps.ActionAppUpdate))
		wantInvalid(t, "UpdateApp", err, "templates.en.sms")
		if again, _ := e.Apps.AppByID(e.ctx, appA); !reflect.DeepEqual(again.Templates, a.Templates) {
			t.Errorf("after a refused update: got %+v, want %+v", again.Templates, a.Templates)
		}
	})

	t.Run("InvalidAppIsRefusedAndNothingIsWritten", func(t *testing.T) {
		e := newEnv(t, newStore)
		bad := newApp(appA)
		bad.CodeLength = 3
		err := e.Apps.CreateApp(e.ctx, bad, audit(apps.ActionAppCreate))
		wantInvalid(t, "CreateApp", err, "code_length")
		if set, _ := e.Apps.LoadApps(e.ctx); len(set.Apps) != 0 {
			t.Errorf("got %d apps, want none", len(set.Apps))
		}
		if actions, _ := e.History.AdminActions(e.ctx, 10); len(actions) != 0 {
			t.Errorf("got audit %+v, want none", actions)
		}
	})

	t.Run("BrowserSettingsAreKept", func(t *testing.T) {
		e := newEnv(t, newStore)
		a := newApp(appA)
		a.Access, a.AllowedOrigins = otp.AccessPublic, []string{"https://shop.example.com", "http://localhost:3000"}
		a.TokenTTL, a.TokenAddress = 90*time.Second, otp.TokenAddressIndex
		if err := e.Apps.CreateApp(e.ctx, a, audit(apps.ActionAppCreate)); err != nil {
			t.Fatalf("CreateApp: %v", err)
		}
		got, err := e.Apps.AppByID(e.ctx, appA)
		want := []string{"http://localhost:3000", "https://shop.example.com"}
		if err != nil || !reflect.DeepEqual(got.AllowedOrigins, want) || got.TokenTTL != a.TokenTTL || got.TokenAddress != a.TokenAddress {
			t.Fatalf("got origins %v, token TTL %s, address %q (%v); want %v, %s, %q", got.AllowedOrigins, got.TokenTTL, got.TokenAddress, err, want, a.TokenTTL, a.TokenAddress)
		}
		got.AllowedOrigins, got.TokenTTL, got.TokenAddress = nil, 0, ""
		if err := e.Apps.UpdateApp(e.ctx, got, audit(apps.ActionAppUpdate)); err != nil {
			t.Fatal(err)
		}
		if again, _ := e.Apps.AppByID(e.ctx, appA); again.AllowedOrigins != nil || again.TokenTTL != otp.DefaultTokenTTL || again.TokenAddress != otp.TokenAddressPlain {
			t.Errorf("after clearing: got origins %v, token TTL %s, address %q; want none and the defaults", again.AllowedOrigins, again.TokenTTL, again.TokenAddress)
		}
		bad := newApp(appB)
		bad.AllowedOrigins = []string{"https://shop.example.com"}
		err = e.Apps.CreateApp(e.ctx, bad, audit(apps.ActionAppCreate))
		wantInvalid(t, "CreateApp of a key app with origins", err, "allowed_origins")
	})

	t.Run("UpdateAndDelete", func(t *testing.T) {
		e := newEnv(t, newStore)
		if err := e.Apps.CreateApp(e.ctx, newApp(appA), audit(apps.ActionAppCreate)); err != nil {
			t.Fatal(err)
		}
		k := apps.Key{ID: "SK0001", AppID: appA, Hash: hash("s1"), CreatedAt: base()}
		if err := e.Apps.CreateKey(e.ctx, k, audit(apps.ActionKeyCreate)); err != nil {
			t.Fatal(err)
		}
		up := newApp(appA)
		up.Name, up.Access = "Shop 2", otp.AccessPublic
		if err := e.Apps.UpdateApp(e.ctx, up, audit(apps.ActionAppUpdate)); err != nil {
			t.Fatalf("UpdateApp: %v", err)
		}
		if a, err := e.Apps.AppByID(e.ctx, appA); err != nil || a.Name != "Shop 2" || a.Access != otp.AccessPublic {
			t.Errorf("AppByID: got %+v, %v, want the update", a, err)
		}
		wantNotFound(t, "UpdateApp(unknown)", e.Apps.UpdateApp(e.ctx, newApp(appB), audit(apps.ActionAppUpdate)))
		if err := e.Apps.DeleteApp(e.ctx, appA, base(), audit(apps.ActionAppDelete)); err != nil {
			t.Fatalf("DeleteApp: %v", err)
		}
		_, err := e.Apps.AppByID(e.ctx, appA)
		wantNotFound(t, "AppByID(deleted)", err)
		wantNotFound(t, "DeleteApp(again)", e.Apps.DeleteApp(e.ctx, appA, base(), audit(apps.ActionAppDelete)))
		set, _ := e.Apps.LoadApps(e.ctx)
		if len(set.Apps) != 0 || len(set.Keys) != 0 {
			t.Errorf("after delete: got %d apps %d keys, want none: its keys are revoked", len(set.Apps), len(set.Keys))
		}
		keys, _ := e.Apps.AppKeys(e.ctx, appA)
		if len(keys) != 1 || !keys[0].Revoked() {
			t.Errorf("AppKeys: got %+v, want the one key, revoked", keys)
		}
	})

	t.Run("KeysAreRevokedAndTouched", func(t *testing.T) {
		e := newEnv(t, newStore)
		k := apps.Key{ID: "SK0002", AppID: otp.DefaultAppID, Name: "backend", Hash: hash("s2"), TrustedClientIP: true, CreatedAt: base()}
		if err := e.Apps.CreateKey(e.ctx, k, audit(apps.ActionKeyCreate)); err != nil {
			t.Fatal(err)
		}
		used := base().Add(time.Minute)
		if err := e.Apps.TouchKeys(e.ctx, map[string]time.Time{k.ID: used, "SKunknown": used}); err != nil {
			t.Fatalf("TouchKeys: %v", err)
		}
		set, _ := e.Apps.LoadApps(e.ctx)
		if len(set.Keys) != 1 {
			t.Fatalf("got %d keys, want 1", len(set.Keys))
		}
		got := set.Keys[0]
		if got.ID != k.ID || !bytes.Equal(got.Hash, k.Hash) || !got.TrustedClientIP || got.Name != "backend" || !got.LastUsedAt.Equal(used) {
			t.Errorf("got %+v, want %+v last used %v", got, k, used)
		}
		err := e.Apps.RevokeKey(e.ctx, appA, k.ID, base(), audit(apps.ActionKeyRevoke))
		wantNotFound(t, "RevokeKey(other app)", err)
		if err := e.Apps.RevokeKey(e.ctx, otp.DefaultAppID, k.ID, base(), audit(apps.ActionKeyRevoke)); err != nil {
			t.Fatalf("RevokeKey: %v", err)
		}
		if !errors.Is(e.Apps.RevokeKey(e.ctx, otp.DefaultAppID, k.ID, base(), audit(apps.ActionKeyRevoke)), otp.ErrNotFound) {
			t.Errorf("RevokeKey(again): want ErrNotFound")
		}
		if set, _ := e.Apps.LoadApps(e.ctx); len(set.Keys) != 0 {
			t.Errorf("got %d live keys after revoking, want 0", len(set.Keys))
		}
	})
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}
