package apps_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
)

func defaultApp() otp.App {
	return otp.Config{CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5}.DefaultApp()
}

func newAdmin(t *testing.T) (*apps.Admin, *apps.Registry, *inmem.Store) {
	t.Helper()
	mem := inmem.New()
	reg := apps.NewRegistry(mem, defaultApp(), slog.New(slog.DiscardHandler))
	if err := reg.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	return apps.NewAdmin(mem, reg), reg, mem
}

func ptr[T any](v T) *T { return &v }

func TestRegistry(t *testing.T) {
	ctx := context.Background()

	t.Run("NewAppTakesTheDefaultAppsSettings", func(t *testing.T) {
		admin, reg, _ := newAdmin(t)
		info, err := admin.CreateApp(ctx, apps.Patch{Name: ptr("Shop"), CodeLength: ptr(8)}, "test")
		if err != nil {
			t.Fatal(err)
		}
		got, err := reg.App(ctx, info.App.ID)
		if err != nil {
			t.Fatalf("App: %v", err)
		}
		if got.CodeLength != 8 || got.CodeTTL != 5*time.Minute || got.MaxSends != 5 || got.Access != otp.AccessPublic || got.Default {
			t.Errorf("got %+v, want code length 8 and the default app's other settings", got)
		}
	})

	t.Run("KeysAuthenticateOnlyWithTheirSecretUntilRevoked", func(t *testing.T) {
		admin, reg, _ := newAdmin(t)
		k, err := admin.CreateKey(ctx, otp.DefaultAppAlias, apps.NewKey{Name: "backend"}, "test")
		if err != nil {
			t.Fatal(err)
		}
		if id, ok := apps.KeyIDOf(k.Secret); !ok || id != k.Key.ID {
			t.Fatalf("KeyIDOf(secret) = %q, %v; want %q", id, ok, k.Key.ID)
		}
		if got, err := reg.Authenticate(ctx, k.Key.ID, k.Secret); err != nil || got.AppID != otp.DefaultAppID {
			t.Fatalf("Authenticate: got %+v, %v; want the default app's key", got, err)
		}
		wrong := k.Secret[:len(k.Secret)-1] + "0"
		if wrong == k.Secret {
			wrong = k.Secret[:len(k.Secret)-1] + "1"
		}
		for name, try := range map[string][2]string{
			"WrongSecret": {k.Key.ID, wrong}, "UnknownKey": {"SKnope", k.Secret}, "Empty": {k.Key.ID, ""},
		} {
			if _, err := reg.Authenticate(ctx, try[0], try[1]); !errors.Is(err, apps.ErrBadKey) {
				t.Errorf("%s: got %v, want ErrBadKey", name, err)
			}
		}
		if err := admin.RevokeKey(ctx, otp.DefaultAppAlias, k.Key.ID, "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := reg.Authenticate(ctx, k.Key.ID, k.Secret); !errors.Is(err, apps.ErrBadKey) {
			t.Errorf("revoked: got %v, want ErrBadKey", err)
		}
	})

	t.Run("KeyUseIsRecordedByRun", func(t *testing.T) {
		admin, reg, mem := newAdmin(t)
		k, _ := admin.CreateKey(ctx, otp.DefaultAppAlias, apps.NewKey{}, "test")
		for range 3 {
			if _, err := reg.Authenticate(ctx, k.Key.ID, k.Secret); err != nil {
				t.Fatal(err)
			}
		}
		reg.PollInterval = 10 * time.Millisecond
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- reg.Run(runCtx) }()
		deadline := time.Now().Add(10 * time.Second)
		for {
			keys, _ := mem.AppKeys(ctx, otp.DefaultAppID)
			if len(keys) == 1 && !keys[0].LastUsedAt.IsZero() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("got keys %+v, want the key's last use recorded", keys)
			}
			time.Sleep(10 * time.Millisecond)
		}
		stop()
		<-done
	})

	t.Run("AnotherAdminsChangeArrivesByPolling", func(t *testing.T) {
		_, reg, mem := newAdmin(t)
		other := apps.NewRegistry(mem, defaultApp(), slog.New(slog.DiscardHandler))
		info, err := apps.NewAdmin(mem, other).CreateApp(ctx, apps.Patch{Name: ptr("Elsewhere")}, "test")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := reg.App(ctx, info.App.ID); !errors.Is(err, otp.ErrNotFound) {
			t.Fatalf("before the poll: got %v, want ErrNotFound", err)
		}
		reg.PollInterval = 10 * time.Millisecond
		runCtx, stop := context.WithCancel(ctx)
		defer stop()
		go func() { _ = reg.Run(runCtx) }()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := reg.App(ctx, info.App.ID); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the app never arrived")
			}
			time.Sleep(10 * time.Millisecond)
		}
	})

	t.Run("DefaultAppIsReadOnly", func(t *testing.T) {
		admin, _, _ := newAdmin(t)
		var invalid *otp.ErrInvalidRequest
		if _, err := admin.UpdateApp(ctx, otp.DefaultAppAlias, apps.Patch{Name: ptr("x")}, "test"); !errors.As(err, &invalid) {
			t.Errorf("UpdateApp(default): got %v, want ErrInvalidRequest", err)
		}
		if err := admin.DeleteApp(ctx, otp.DefaultAppID, "test"); !errors.As(err, &invalid) {
			t.Errorf("DeleteApp(default): got %v, want ErrInvalidRequest", err)
		}
	})
}

// TestDefaultAppOff holds an app whose access is off (the default app under
// OTP_DEFAULT_APP_ACCESS=off) to refusing every caller, keyed or not, while apps made
// beside it are public unless they say otherwise, and the registry lists it first.
func TestDefaultAppOff(t *testing.T) {
	ctx := context.Background()
	mem := inmem.New()
	off := otp.Config{CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5, DefaultAccess: otp.AccessOff}.DefaultApp()
	reg := apps.NewRegistry(mem, off, slog.New(slog.DiscardHandler))
	if err := reg.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	admin := apps.NewAdmin(mem, reg)
	k, err := admin.CreateKey(ctx, otp.DefaultAppAlias, apps.NewKey{Name: "backend"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]apps.Key{"NoKey": {}, "ItsOwnKey": k.Key} {
		if err := apps.Authorize(off, key); !errors.Is(err, otp.ErrAppOff) {
			t.Errorf("%s: got %v, want otp.ErrAppOff", name, err)
		}
	}
	info, err := admin.CreateApp(ctx, apps.Patch{Name: ptr("Shop")}, "test")
	if err != nil {
		t.Fatalf("CreateApp beside an app that is off: %v", err)
	}
	if info.App.Access != otp.AccessPublic {
		t.Errorf("new app: got access %q, want public", info.App.Access)
	}
	if err := reg.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if got := reg.Apps(); len(got) != 2 || got[0].ID != otp.DefaultAppID || got[1].ID != info.App.ID {
		t.Errorf("Apps: got %d apps %+v, want the default app, then the new one", len(got), got)
	}
}
