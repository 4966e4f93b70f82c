package appstest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

func testAppsNumbers(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("DeniedNumberTypesAreKeptNilEmptyOrListed", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a := fixture.NewApp(fixture.AppA)
		if err := e.Store.CreateApp(e.Ctx, a, fixture.Audit(apps.ActionAppCreate)); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.Store.AppByID(e.Ctx, fixture.AppA); got.DeniedNumberTypes != nil {
			t.Errorf("unset: got %v, want nil (the server's)", *got.DeniedNumberTypes)
		}
		for _, types := range [][]string{{}, {"premium_rate", "voip"}} {
			a.DeniedNumberTypes = &types
			if err := e.Store.UpdateApp(e.Ctx, a, fixture.Audit(apps.ActionAppUpdate)); err != nil {
				t.Fatal(err)
			}
			got, _ := e.Store.AppByID(e.Ctx, fixture.AppA)
			if got.DeniedNumberTypes == nil || !slices.Equal(*got.DeniedNumberTypes, types) {
				t.Errorf("got %v, want %v", got.DeniedNumberTypes, types)
			}
		}
		set, _ := e.Store.LoadApps(e.Ctx)
		if len(set.Apps) != 1 || set.Apps[0].DeniedNumberTypes == nil || len(*set.Apps[0].DeniedNumberTypes) != 2 {
			t.Errorf("loaded: got %+v, want the app's own list", set.Apps)
		}
		bad := []string{"premium"}
		a.DeniedNumberTypes = &bad
		fixture.WantInvalid(t, "UpdateApp", e.Store.UpdateApp(e.Ctx, a, fixture.Audit(apps.ActionAppUpdate)), "denied_number_types")
		a.DeniedNumberTypes = nil
		if err := e.Store.UpdateApp(e.Ctx, a, fixture.Audit(apps.ActionAppUpdate)); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.Store.AppByID(e.Ctx, fixture.AppA); got.DeniedNumberTypes != nil {
			t.Errorf("back to the server's: got %v, want nil", *got.DeniedNumberTypes)
		}
	})

	t.Run("TestNumbersAreKeptSealedAndLoadedWhileTheyWork", func(t *testing.T) {
		e := fixture.New(t, newStore)
		before, _ := e.Store.SettingVersion(e.Ctx, apps.SettingName)
		working := apps.TestNumber{ID: fixture.NewID(), AppID: fixture.AppA, Address: "+15005550006", Sealed: []byte("sealed-1"),
			ExpiresAt: fixture.Base().Add(time.Hour), CreatedAt: fixture.Base().Add(-time.Minute)}
		expired := apps.TestNumber{ID: fixture.NewID(), AppID: fixture.AppA, Address: "qa@example.com", Sealed: []byte("sealed-2"),
			ExpiresAt: fixture.Base().Add(-time.Second), CreatedAt: fixture.Base().Add(-time.Hour)}
		onDefault := apps.TestNumber{ID: fixture.NewID(), AppID: otp.DefaultAppID, Address: "+15005550006", Sealed: []byte("sealed-3"),
			ExpiresAt: fixture.Base().Add(time.Hour), CreatedAt: fixture.Base()}
		for _, tn := range []apps.TestNumber{expired, working, onDefault} {
			if err := e.Store.CreateTestNumber(e.Ctx, tn, fixture.Audit(apps.ActionTestNumberAdd)); err != nil {
				t.Fatalf("CreateTestNumber: %v", err)
			}
		}
		list, err := e.Store.TestNumbers(e.Ctx, fixture.AppA)
		if err != nil || len(list) != 2 || list[0].ID != working.ID || list[1].ID != expired.ID ||
			string(list[0].Sealed) != "sealed-1" || !list[0].ExpiresAt.Equal(working.ExpiresAt) {
			t.Fatalf("got %+v, %v; want both of the app's, newest first", list, err)
		}
		set, err := e.Store.LoadApps(e.Ctx)
		if err != nil || set.Version <= before || len(set.TestNumbers) != 2 {
			t.Fatalf("loaded: got %+v, %v; want the two working ones at a later version", set.TestNumbers, err)
		}
		for _, tn := range set.TestNumbers {
			if tn.ID == expired.ID {
				t.Errorf("loaded the expired one: %+v", tn)
			}
		}
		actions, _ := e.Store.AdminActions(e.Ctx, 10)
		if len(actions) != 3 || actions[0].Action != apps.ActionTestNumberAdd {
			t.Errorf("audit: got %+v, want three test_number_add", actions)
		}
	})

	t.Run("OneWorkingTestNumberPerAddressAnExpiredOneIsReplaced", func(t *testing.T) {
		e := fixture.New(t, newStore)
		first := apps.TestNumber{ID: fixture.NewID(), AppID: fixture.AppA, Address: "+15005550006", Sealed: []byte("s"),
			ExpiresAt: fixture.Base().Add(time.Hour), CreatedAt: fixture.Base()}
		if err := e.Store.CreateTestNumber(e.Ctx, first, fixture.Audit(apps.ActionTestNumberAdd)); err != nil {
			t.Fatal(err)
		}
		second := first
		second.ID = fixture.NewID()
		fixture.WantInvalid(t, "a second one", e.Store.CreateTestNumber(e.Ctx, second, fixture.Audit(apps.ActionTestNumberAdd)), "address")
		if list, _ := e.Store.TestNumbers(e.Ctx, fixture.AppA); len(list) != 1 || list[0].ID != first.ID {
			t.Errorf("after the refusal: got %+v, want the first only", list)
		}
		second.CreatedAt = fixture.Base().Add(2 * time.Hour) // the first expired by then
		if err := e.Store.CreateTestNumber(e.Ctx, second, fixture.Audit(apps.ActionTestNumberAdd)); err != nil {
			t.Fatalf("replacing an expired one: %v", err)
		}
		if list, _ := e.Store.TestNumbers(e.Ctx, fixture.AppA); len(list) != 1 || list[0].ID != second.ID {
			t.Errorf("after the replacement: got %+v, want the second only", list)
		}
	})

	t.Run("TestNumbersAreDeletedWithinTheirApp", func(t *testing.T) {
		e := fixture.New(t, newStore)
		tn := apps.TestNumber{ID: fixture.NewID(), AppID: fixture.AppA, Address: "+15005550006", Sealed: []byte("s"),
			ExpiresAt: fixture.Base().Add(time.Hour), CreatedAt: fixture.Base()}
		if err := e.Store.CreateTestNumber(e.Ctx, tn, fixture.Audit(apps.ActionTestNumberAdd)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.DeleteTestNumber(e.Ctx, fixture.AppB, tn.ID, fixture.Audit(apps.ActionTestNumberRemove)); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("through another app: got %v, want not found", err)
		}
		got, err := e.Store.DeleteTestNumber(e.Ctx, fixture.AppA, tn.ID, fixture.Audit(apps.ActionTestNumberRemove))
		if err != nil || got.ID != tn.ID || got.Address != tn.Address {
			t.Fatalf("got %+v, %v; want the removed one", got, err)
		}
		if _, err := e.Store.DeleteTestNumber(e.Ctx, fixture.AppA, tn.ID, fixture.Audit(apps.ActionTestNumberRemove)); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("again: got %v, want not found", err)
		}
		if set, _ := e.Store.LoadApps(e.Ctx); len(set.TestNumbers) != 0 {
			t.Errorf("loaded after the delete: %+v", set.TestNumbers)
		}
	})
}
