package apps_test

import (
	"slices"
	"testing"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestAddressKeysListEachPartitionOnce(t *testing.T) {
	const phone = "+819012345678"
	app := func(id string, access otp.Access) otp.App {
		a := otp.Config{}.DefaultApp()
		a.ID, a.Default, a.Access = id, false, access
		return a
	}
	def := otp.Config{}.DefaultApp()
	key1, key2 := app("11111111-1111-4111-8111-111111111111", otp.AccessKey), app("22222222-2222-4222-8222-222222222222", otp.AccessKey)
	public := app("33333333-3333-4333-8333-333333333333", otp.AccessPublic)
	got := apps.AddressKeys([]otp.App{def, key1, public, key2}, phone)
	want := []string{phone, "key|" + phone, public.ID + "|" + phone}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	t.Run("AddressLimitsCoverEveryPartitionAndApp", func(t *testing.T) {
		got := apps.AddressLimits([]otp.App{def, public}, phone, "idx")
		want := []rate.Limit{
			{Scope: otp.ScopePhone, Key: "idx"}, {Scope: otp.ScopeCheckPhone, Key: "idx"},
			{Scope: otp.ScopePhone, Key: public.ID + "|idx"}, {Scope: otp.ScopeCheckPhone, Key: public.ID + "|idx"},
			{Scope: otp.ScopeApp, Key: def.ID + "|idx"}, {Scope: otp.ScopeAppCheck, Key: def.ID + "|idx"},
			{Scope: otp.ScopeApp, Key: public.ID + "|idx"}, {Scope: otp.ScopeAppCheck, Key: public.ID + "|idx"},
		}
		if len(got) != len(want) {
			t.Fatalf("got %d limits %v, want %v", len(got), got, want)
		}
		for i := range want {
			if got[i].Scope != want[i].Scope || got[i].Key != want[i].Key {
				t.Errorf("limit %d: got %s %q, want %s %q", i, got[i].Scope, got[i].Key, want[i].Scope, want[i].Key)
			}
		}
	})
}
