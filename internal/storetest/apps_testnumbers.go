package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
)

func testAppsNumbers(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Run("DeniedNumberTypesAreKeptNilEmptyOrListed", func(t *testing.T) {
		e := newEnv(t, newStore)
		a := newApp(appA)
		if err := e.Apps.CreateApp(e.ctx, a, audit(apps.ActionAppCreate)); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.Apps.AppByID(e.ctx, appA); got.DeniedNumberTypes != nil {
			t.Errorf("unset: got %v, want nil (the server's)", *got.DeniedNumberTypes)
		}
		for _, types := range [][]string{{}, {"premium_rate", "voip"}} {
			a.DeniedNumberTypes = &types
			if err := e.Apps.UpdateApp(e.ctx, a, audit(apps.ActionAppUpdate)); err != nil {
				t.Fatal(err)
			}
			got, _ := e.Apps.AppByID(e.ctx, appA)
			if got.DeniedNumberTypes == nil || !slices.Equal(*got.DeniedNumberTypes, types) {
				t.Errorf("got %v, want %v", got.DeniedNumberTypes, types)
			}
		}
		set, _ := e.Apps.LoadApps(e.ctx)
		if len(set.Apps) != 1 || set.Apps[0].DeniedNumberTypes == nil || len(*set.Apps[0].DeniedNumberTypes) != 2 {
			t.Errorf("loaded: got %+v, want the app's own list", set.Apps)
		}
		bad := []string{"premium"}
		a.DeniedNumberTypes = &bad
		wantInvalid(t, "UpdateApp", e.Apps.UpdateApp(e.ctx, a, audit(apps.ActionAppUpdate)), "denied_number_types")
		a.DeniedNumberTypes = nil
		if err := e.Apps.UpdateApp(e.ctx, a, audit(apps.ActionAppUpdate)); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.Apps.AppByID(e.ctx, appA); got.DeniedNumberTypes != nil {
			t.Errorf("back to the server's: got %v, want nil", *got.DeniedNumberTypes)
		}
	})

	t.Run("TestNumbersAreKeptSealedAndLoadedWhileTheyWork", func(t *testing.T) {
		e := newEnv(t, newStore)
		before, _ := e.Apps.SettingVersion(e.ctx, apps.SettingName)
		working := apps.TestNumber{ID: newID(), AppID: appA, Address: "+15005550006", Sealed: []byte("sealed-1"),
			ExpiresAt: base().Add(time.Hour), CreatedAt: base().Add(-time.Minute)}
		expired := apps.TestNumber{ID: newID(), AppID: appA, Address: "qa@example.com", Sealed: []byte("sealed-2"),
			ExpiresAt: base().Add(-time.Second), CreatedAt: base().Add(-time.Hour)}
		onDefault := apps.TestNumber{ID: newID(), AppID: otp.DefaultAppID, Address: "+15005550006", Sealed: []byte("sealed-3"),
			ExpiresAt: base().Add(time.Hour), CreatedAt: base()}
		for _, tn := range []apps.TestNumber{expired, working, onDefault} {
			if err := e.Apps.CreateTestNumber(e.ctx, tn, audit(apps.ActionTestNumberAdd)); err != nil {
				t.Fatalf("CreateTestNumber: %v", err)
			}
		}
		list, err := e.Apps.TestNumbers(e.ctx, appA)
		if err != nil || len(list) != 2 || list[0].ID != working.ID || list[1].ID != expired.ID ||
			string(list[0].Sealed) != "sealed-1" || !list[0].ExpiresAt.Equal(working.ExpiresAt) {
			t.Fatalf("got %+v, %v; want both of the app's, newest first", list, err)
		}
		set, err := e.Apps.LoadApps(e.ctx)
		if err != nil || set.Version <= before || len(set.TestNumbers) != 2 {
			t.Fatalf("loaded: got %+v, %v; want the two working ones at a later version", set.TestNumbers, err)
		}
		for _, tn := range set.TestNumbers {
			if tn.ID == expired.ID {
				t.Errorf("loaded the expired one: %+v", tn)
			}
		}
		actions, _ := e.History.AdminActions(e.ctx, 10)
		if len(actions) != 3 || actions[0].Action != apps.ActionTestNumberAdd {
			t.Errorf("audit: got %+v, want three test_number_add", actions)
		}
	})

	t.Run("OneWorkingTestNumberPerAddressAnExpiredOneIsReplaced", func(t *testing.T) {
		e := newEnv(t, newStore)
		first := apps.TestNumber{ID: newID(), AppID: appA, Address: "+15005550006", Sealed: []byte("s"),
			ExpiresAt: base().Add(time.Hour), CreatedAt: base()}
		if err := e.Apps.CreateTestNumber(e.ctx, first, audit(apps.ActionTestNumberAdd)); err != nil {
			t.Fatal(err)
		}
		second := first
		second.ID = newID()
		wantInvalid(t, "a second one", e.Apps.CreateTestNumber(e.ctx, second, audit(apps.ActionTestNumberAdd)), "address")
		if list, _ := e.Apps.TestNumbers(e.ctx, appA); len(list) != 1 || list[0].ID != first.ID {
			t.Errorf("after the refusal: got %+v, want the first only", list)
		}
		second.CreatedAt = base().Add(2 * time.Hour) // the first expired by then
		if err := e.Apps.CreateTestNumber(e.ctx, second, audit(apps.ActionTestNumberAdd)); err != nil {
			t.Fatalf("replacing an expired one: %v", err)
		}
		if list, _ := e.Apps.TestNumbers(e.ctx, appA); len(list) != 1 || list[0].ID != second.ID {
			t.Errorf("after the replacement: got %+v, want the second only", list)
		}
	})

	t.Run("TestNumbersAreDeletedWithinTheirApp", func(t *testing.T) {
		e := newEnv(t, newStore)
		tn := apps.TestNumber{ID: newID(), AppID: appA, Address: "+15005550006", Sealed: []byte("s"),
			ExpiresAt: base().Add(time.Hour), CreatedAt: base()}
		if err := e.Apps.CreateTestNumber(e.ctx, tn, audit(apps.ActionTestNumberAdd)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Apps.DeleteTestNumber(e.ctx, appB, tn.ID, audit(apps.ActionTestNumberRemove)); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("through another app: got %v, want not found", err)
		}
		got, err := e.Apps.DeleteTestNumber(e.ctx, appA, tn.ID, audit(apps.ActionTestNumberRemove))
		if err != nil || got.ID != tn.ID || got.Address != tn.Address {
			t.Fatalf("got %+v, %v; want the removed one", got, err)
		}
		if _, err := e.Apps.DeleteTestNumber(e.ctx, appA, tn.ID, audit(apps.ActionTestNumberRemove)); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("again: got %v, want not found", err)
		}
		if set, _ := e.Apps.LoadApps(e.ctx); len(set.TestNumbers) != 0 {
			t.Errorf("loaded after the delete: %+v", set.TestNumbers)
		}
	})
}
