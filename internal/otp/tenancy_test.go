package otp_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

const (
	publicAppID = "0193a4c2-7d1e-7c3a-9b1e-2f4d5a6b7c8d"
	keyAppID    = "0193a4c2-7d1e-7c3a-9b1e-2f4d5a6b7c8e"
	keyApp2ID   = "0193a4c2-7d1e-7c3a-9b1e-2f4d5a6b7c8f"
)

// tenant is an app other than the default one, with the unit tests' settings.
func tenant(id string, access otp.Access) otp.App {
	a := otp.Config{CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 3}.DefaultApp()
	a.ID, a.Name, a.Default, a.Access = id, "Tenant", false, access
	return a
}

func TestAddressKey(t *testing.T) {
	def := otp.Config{}.DefaultApp()
	defKey := otp.Config{DefaultAccess: otp.AccessKey}.DefaultApp()
	tests := []struct {
		name string
		app  otp.App
		want string
	}{
		{"PublicDefaultAppKeepsTheBareAddress", def, testPhone},
		{"PublicAppHasItsOwnPartition", tenant(publicAppID, otp.AccessPublic), publicAppID + "|" + testPhone},
		{"KeyAppsShareOnePartition", tenant(keyAppID, otp.AccessKey), "key|" + testPhone},
		{"KeyDefaultAppJoinsTheKeyApps", defKey, "key|" + testPhone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := otp.AddressKey(tt.app, testPhone); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// scopeKey is the key of scope in a policy; "" when the policy has none.
func scopeKey(policy []rate.Limit, scope string) string {
	for _, l := range policy {
		if l.Scope == scope {
			return l.Key
		}
	}
	return ""
}

func TestSendKeysThePhoneBudgetInTheAppsPartition(t *testing.T) {
	for _, app := range []otp.App{tenant(publicAppID, otp.AccessPublic), tenant(keyAppID, otp.AccessKey)} {
		e := newEnv(t)
		if _, err := e.svc.Send(context.Background(), otp.SendInput{App: &app, Phone: testPhone, ClientIP: testIP}); err != nil {
			t.Fatal(err)
		}
		allows := e.limiter.Allows()
		if got, want := scopeKey(allows[0], otp.ScopePhone), otp.AddressKey(app, testPhone); got != want {
			t.Errorf("%s app: phone key %q, want %q", app.Access, got, want)
		}
	}
}

func TestCheckSpendsTheAddressBudgetOnlyWhereItCouldSucceed(t *testing.T) {
	ctx := context.Background()
	checkIPOnly := func(t *testing.T, e *env, before int) {
		t.Helper()
		got := e.limiter.Allows()[before:]
		if len(got) != 1 || len(got[0]) != 1 || got[0][0].Scope != otp.ScopeCheckIP {
			t.Errorf("policy: got %+v, want the client IP's check budget alone", got)
		}
	}
	t.Run("PendingInTheAppSpendsItsPartition", func(t *testing.T) {
		e := newEnv(t)
		app := tenant(keyAppID, otp.AccessKey)
		if _, err := e.svc.Send(ctx, otp.SendInput{App: &app, Phone: testPhone, ClientIP: testIP}); err != nil {
			t.Fatal(err)
		}
		before := len(e.limiter.Allows())
		if _, err := e.svc.Check(ctx, otp.CheckInput{App: &app, Phone: testPhone, Code: codes[0], ClientIP: testIP}); err != nil {
			t.Fatalf("got %v, want approved", err)
		}
		if got := scopeKey(e.limiter.Allows()[before], otp.ScopeCheckPhone); got != "key|"+testPhone {
			t.Errorf("check_phone key: got %q, want the key apps' partition", got)
		}
	})
	t.Run("PendingInAnotherAppCostsOnlyTheIP", func(t *testing.T) {
		e := newEnv(t)
		app := tenant(keyAppID, otp.AccessKey)
		if _, err := e.svc.Send(ctx, otp.SendInput{App: &app, Phone: testPhone, ClientIP: testIP}); err != nil {
			t.Fatal(err)
		}
		for _, in := range []otp.CheckInput{{Phone: testPhone}, {ID: "0190a000-0000-7000-8000-000000000001"}} {
			before := len(e.limiter.Allows())
			in.Code, in.ClientIP = codes[0], testIP
			if _, err := e.svc.Check(ctx, in); !errors.Is(err, otp.ErrNotFound) {
				t.Fatalf("default app check %+v: got %v, want not found", in, err)
			}
			checkIPOnly(t, e, before)
		}
	})
	t.Run("ClosedVerificationCostsOnlyTheIP", func(t *testing.T) {
		e := newEnv(t)
		id := e.send(t).Verification.ID
		if _, err := e.check(codes[0]); err != nil {
			t.Fatal(err)
		}
		for _, in := range []otp.CheckInput{{Phone: testPhone}, {ID: id}} {
			for _, svc := range []*otp.Service{e.svc, e.otherInstance(t)} {
				before := len(e.limiter.Allows())
				in.Code, in.ClientIP = codes[0], testIP
				if _, err := svc.Check(ctx, in); !errors.Is(err, otp.ErrNotFound) {
					t.Fatalf("check %+v of an approved verification: got %v, want not found", in, err)
				}
				checkIPOnly(t, e, before)
			}
		}
	})
	t.Run("ExcludedCountrySpendsNothing", func(t *testing.T) {
		e := newEnv(t, func(c *otp.Config) { c.AllowedCountries = []string{"US"} })
		if _, err := e.svc.Check(ctx, otp.CheckInput{Phone: testPhone, Code: codes[0], ClientIP: testIP}); !errors.Is(err, otp.ErrNotFound) {
			t.Fatalf("got %v, want not found", err)
		}
		e.wantUntouched(t)
	})
}

// TestCheckByPhoneDecidesOnTheClosedVerificationItRead holds the check to the
// verification it read before the limiter: when that one is closed (and so spent no
// budget of the phone), a verification created meanwhile cannot be guessed at.
func TestCheckByPhoneDecidesOnTheClosedVerificationItRead(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	first := e.send(t).Verification.ID
	if _, err := e.check(codes[0]); err != nil {
		t.Fatal(err)
	}
	var second string
	e.store.AfterNewest = func() {
		e.store.AfterNewest = nil
		e.clock.Set(e.clock.Now().Add(2 * time.Minute))
		second = e.send(t).Verification.ID
	}
	other := e.otherInstance(t)
	in := otp.CheckInput{Phone: testPhone, Code: codes[1], ClientIP: testIP}
	if _, err := other.Check(ctx, in); !errors.Is(err, otp.ErrNotFound) {
		t.Fatalf("got %v, want not found: decided on %s, which was closed", err, first)
	}
	if second == "" || second == first {
		t.Fatalf("no new verification was made meanwhile (%q)", second)
	}
	if v := e.verification(t, second); v.Status != otp.StatusPending || v.Attempts != 0 {
		t.Errorf("new verification: got %s with %d attempts, want pending and untouched", v.Status, v.Attempts)
	}
	// The check's call is the last: the send made meanwhile asked before it.
	if all := e.limiter.Allows(); len(all[len(all)-1]) != 1 || all[len(all)-1][0].Scope != otp.ScopeCheckIP {
		t.Errorf("policy: got %+v, want the client IP's alone", all[len(all)-1])
	}
	// The next check reads the new one, spends the phone's budget and approves.
	before := len(e.limiter.Allows())
	res, err := other.Check(ctx, in)
	if err != nil || res.Verification.ID != second {
		t.Fatalf("retry: got %+v, %v, want %s approved", res.Verification, err, second)
	}
	want := []rate.Limit{
		{Scope: otp.ScopeCheckPhone, Key: testPhone, Rules: e.cfg.CheckPhoneRules},
		{Scope: otp.ScopeCheckIP, Key: testIP, Rules: e.cfg.CheckIPRules},
	}
	if got := e.limiter.Allows()[before]; !reflect.DeepEqual(got, want) {
		t.Errorf("retry policy: got %+v, want %+v", got, want)
	}
}

func TestDefaultAppOff(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, func(c *otp.Config) { c.DefaultAccess = otp.AccessOff })
	if _, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP}); !errors.Is(err, otp.ErrAppOff) || otp.ErrorCode(err) != otp.CodeNotFound {
		t.Errorf("send: got %v, want ErrAppOff (not_found)", err)
	}
	if _, err := e.svc.Check(ctx, otp.CheckInput{Phone: testPhone, Code: codes[0], ClientIP: testIP}); !errors.Is(err, otp.ErrAppOff) {
		t.Errorf("check: got %v, want ErrAppOff", err)
	}
	e.wantUntouched(t)
}
