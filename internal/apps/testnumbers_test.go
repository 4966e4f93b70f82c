package apps_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
)

// sealedAdmin is newAdmin with a code sealer, a default region and a log to read.
func sealedAdmin(t *testing.T, secret string) (*apps.Admin, *apps.Registry, *inmem.Store, *bytes.Buffer) {
	t.Helper()
	mem, logs := inmem.New(), &bytes.Buffer{}
	reg := apps.NewRegistry(mem, defaultApp(), slog.New(slog.NewTextHandler(logs, nil)))
	sealer, err := apps.NewCodeSealer([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	reg.Sealer = sealer
	if err := reg.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	admin := apps.NewAdmin(mem, reg)
	admin.DefaultRegion = "JP"
	return admin, reg, mem, logs
}

func TestTestNumbers(t *testing.T) {
	ctx := context.Background()
	week := time.Now().Add(7 * 24 * time.Hour)

	t.Run("TheSendPathReadsThemFromTheSnapshot", func(t *testing.T) {
		admin, reg, mem, _ := sealedAdmin(t, "server secret")
		info, err := admin.AddTestNumber(ctx, otp.DefaultAppAlias, apps.NewTestNumber{Address: "090-1234-5678", Code: "424242", ExpiresAt: week}, "test")
		if err != nil {
			t.Fatalf("AddTestNumber: %v", err)
		}
		if info.Address != "+819012345678" || info.MaskedCode != "••••42" || !info.Active(time.Now()) {
			t.Errorf("got %+v, want the number in E.164 and its code masked", info)
		}
		app, _ := reg.App(ctx, otp.DefaultAppID)
		tn, ok := app.TestNumber("+819012345678", time.Now())
		if !ok || tn.Code != "424242" || tn.ID != info.ID {
			t.Errorf("registry: got %+v, %v; want the fixed code in memory", tn, ok)
		}
		stored, _ := mem.TestNumbers(ctx, otp.DefaultAppID)
		if len(stored) != 1 || bytes.Contains(stored[0].Sealed, []byte("424242")) {
			t.Errorf("stored: got %+v, want the code sealed", stored)
		}
		if _, ok := app.TestNumber("+819012345678", week.Add(time.Second)); ok {
			t.Error("after its expiry: got a test number, want none")
		}
		listed, err := admin.TestNumbers(ctx, otp.DefaultAppAlias)
		if err != nil || len(listed) != 1 || listed[0].MaskedCode != "••••42" {
			t.Errorf("list: got %+v, %v", listed, err)
		}
		if _, err := admin.RemoveTestNumber(ctx, otp.DefaultAppAlias, info.ID, "test"); err != nil {
			t.Fatal(err)
		}
		if app, _ := reg.App(ctx, otp.DefaultAppID); len(app.TestNumbers) != 0 {
			t.Errorf("after removal: got %+v, want none", app.TestNumbers)
		}
	})

	t.Run("BadInputNamesTheFieldAndStoresNothing", func(t *testing.T) {
		admin, _, mem, _ := sealedAdmin(t, "server secret")
		shop, err := admin.CreateApp(ctx, apps.Patch{Name: ptr("Shop"), CodeLength: ptr(8)}, "test")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			in    apps.NewTestNumber
			field string
		}{
			{apps.NewTestNumber{Address: "", Code: "12345678", ExpiresAt: week}, "address"},
			{apps.NewTestNumber{Address: "not a number", Code: "12345678", ExpiresAt: week}, "address"},
			{apps.NewTestNumber{Address: "qa@", Code: "12345678", ExpiresAt: week}, "address"},
			{apps.NewTestNumber{Address: "+15005550006", Code: "424242", ExpiresAt: week}, "code"},
			{apps.NewTestNumber{Address: "+15005550006", Code: "1234567a", ExpiresAt: week}, "code"},
			{apps.NewTestNumber{Address: "+15005550006", Code: "12345678", ExpiresAt: time.Now().Add(-time.Minute)}, "expires_at"},
			{apps.NewTestNumber{Address: "+15005550006", Code: "12345678", ExpiresAt: time.Now().Add(400 * 24 * time.Hour)}, "expires_at"},
		} {
			_, err := admin.AddTestNumber(ctx, shop.App.ID, c.in, "test")
			var inv *otp.ErrInvalidRequest
			if !errors.As(err, &inv) || inv.Fields[c.field] == "" {
				t.Errorf("%+v: got %v, want a problem with %s", c.in, err, c.field)
			}
		}
		if list, _ := mem.TestNumbers(ctx, shop.App.ID); len(list) != 0 {
			t.Errorf("stored %+v, want nothing", list)
		}
		if _, err := admin.AddTestNumber(ctx, "0190a000-0000-7000-8000-0000000000ff", apps.NewTestNumber{Address: "+15005550006", Code: "12345678", ExpiresAt: week}, "test"); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("unknown app: got %v, want not found", err)
		}
		if _, err := admin.AddTestNumber(ctx, shop.App.ID, apps.NewTestNumber{Address: "QA@Example.com", Code: "12345678", ExpiresAt: week}, "test"); err != nil {
			t.Errorf("an email address: got %v, want it added", err)
		}
	})

	t.Run("ACodeAnotherSecretSealedIsSkipped", func(t *testing.T) {
		admin, _, mem, _ := sealedAdmin(t, "old secret")
		if _, err := admin.AddTestNumber(ctx, otp.DefaultAppAlias, apps.NewTestNumber{Address: "+15005550006", Code: "424242", ExpiresAt: week}, "test"); err != nil {
			t.Fatal(err)
		}
		logs := &bytes.Buffer{}
		reg := apps.NewRegistry(mem, defaultApp(), slog.New(slog.NewTextHandler(logs, nil)))
		reg.Sealer, _ = apps.NewCodeSealer([]byte("new secret"))
		if err := reg.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		if app, _ := reg.App(ctx, otp.DefaultAppID); len(app.TestNumbers) != 0 {
			t.Errorf("got %+v, want the unreadable one skipped", app.TestNumbers)
		}
		if !strings.Contains(logs.String(), "test number skipped") || strings.Contains(logs.String(), "424242") {
			t.Errorf("log: got %q, want the skip named and no code", logs.String())
		}
		listed, _ := apps.NewAdmin(mem, reg).TestNumbers(ctx, otp.DefaultAppAlias)
		if len(listed) != 1 || listed[0].MaskedCode != "unreadable" {
			t.Errorf("list: got %+v, want it shown unreadable", listed)
		}
	})
}
