package admin

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"otpgate/internal/otp"
	"otpgate/internal/pii"
	"otpgate/internal/rate"
)

// limitsBody is the JSON of /admin/api/limits as a client reads it.
type limitsBody struct {
	Target string       `json:"target"`
	Rules  []adminLimit `json:"rules"`
}

func (b limitsBody) rule(scope, rule string) adminLimit {
	for _, r := range b.Rules {
		if r.Scope == scope && r.Rule == rule {
			return r
		}
	}
	return adminLimit{Scope: "missing"}
}

func TestAdminAPILimits(t *testing.T) {
	e := newAdminEnv(t, nil)
	ctx := context.Background()
	spend := func(t *testing.T, limits ...rate.Limit) {
		t.Helper()
		d, err := e.limiter.Allow(ctx, limits)
		if err != nil || !d.Allowed {
			t.Fatalf("Allow: got %v, %v, want allowed", d.Allowed, err)
		}
	}
	rules := map[string][]rate.Rule{}
	for _, l := range testRules() {
		rules[l.Scope] = l.Rules
	}
	spend(t, rate.Limit{Scope: otp.ScopePhone, Key: phoneA, Rules: rules[otp.ScopePhone]})
	spend(t, rate.Limit{Scope: otp.ScopeCheckPhone, Key: phoneA, Rules: rules[otp.ScopeCheckPhone]})
	spend(t, rate.Limit{Scope: otp.ScopeCheckPhone, Key: phoneA, Rules: rules[otp.ScopeCheckPhone]})

	t.Run("StatePerRule", func(t *testing.T) {
		b := getJSON[limitsBody](t, e, "/admin/api/limits?phone=090-1234-5678")
		if b.Target != "phone:"+phoneA || len(b.Rules) != 3 {
			t.Fatalf("got target %q with %d rules, want phone:%s with 3", b.Target, len(b.Rules), phoneA)
		}
		minute := b.rule("phone", "1/1m")
		if minute.Used != 1 || minute.Limit != 1 || minute.Remaining != 0 || minute.WindowSeconds != 60 ||
			minute.RetryAfterSeconds < 1 || minute.RetryAfterSeconds > 60 || minute.ResetAfterSeconds < 1 {
			t.Errorf("phone 1/1m: got %+v, want used 1 of 1, retry within a minute", minute)
		}
		if hour := b.rule("phone", "10/1h"); hour.Used != 1 || hour.Remaining != 9 || hour.RetryAfterSeconds != 0 {
			t.Errorf("phone 10/1h: got %+v, want used 1, 9 remaining, no wait", hour)
		}
		if check := b.rule("check_phone", "10/1h"); check.Used != 2 || check.Remaining != 8 {
			t.Errorf("check_phone 10/1h: got %+v, want used 2, 8 remaining", check)
		}
	})

	t.Run("BasicDeleteWithoutCSRFTokenIsRefused", func(t *testing.T) {
		w := e.call(t, http.MethodDelete, "/admin/api/limits?phone=09012345678", basic("support", testAdminToken), nil)
		if w.Code != http.StatusForbidden {
			t.Fatalf("got %d, want 403; body %s", w.Code, w.Body)
		}
		if p := decodeProblem(t, w); p.Code != "csrf_failed" {
			t.Errorf("code: got %v, want csrf_failed", p.Code)
		}
		if b := getJSON[limitsBody](t, e, "/admin/api/limits?phone=09012345678"); b.rule("phone", "1/1m").Used != 1 {
			t.Errorf("used after refused reset: got %d, want 1", b.rule("phone", "1/1m").Used)
		}
		if actions, _ := e.store.AdminActions(ctx, 0); len(actions) != 0 {
			t.Errorf("admin actions after refused reset: got %d, want 0", len(actions))
		}
	})

	t.Run("BearerDeleteResetsAndIsAudited", func(t *testing.T) {
		w := e.call(t, http.MethodDelete, "/admin/api/limits?phone="+url.QueryEscape(phoneA), bearer(testAdminToken), nil)
		if w.Code != http.StatusOK {
			t.Fatalf("got %d, want 200; body %s", w.Code, w.Body)
		}
		for _, r := range getJSON[limitsBody](t, e, "/admin/api/limits?phone="+url.QueryEscape(phoneA)).Rules {
			if r.Used != 0 || r.Remaining != r.Limit {
				t.Errorf("%s %s after reset: got used %d remaining %d, want 0 and %d", r.Scope, r.Rule, r.Used, r.Remaining, r.Limit)
			}
		}
		states, err := e.limiter.Inspect(ctx, rate.Limit{Scope: otp.ScopePhone, Key: phoneA, Rules: rules[otp.ScopePhone]})
		if err != nil || states[0].Used != 0 {
			t.Errorf("limiter after reset: got %+v, %v, want nothing used", states, err)
		}
		actions, err := e.store.AdminActions(ctx, 0)
		if err != nil || len(actions) != 1 {
			t.Fatalf("admin actions: got %v, %v, want one", actions, err)
		}
		if a := actions[0]; a.Action != "limit_reset" || a.Target != "phone:"+pii.Mask(phoneA) || a.Before == "" || a.After == "" || !strings.Contains(a.Detail, "api token") {
			t.Errorf("admin action: got %+v, want limit_reset of phone:%s by the api token with before and after", a, pii.Mask(phoneA))
		}
	})

	t.Run("BasicDeleteWithCSRFTokenResets", func(t *testing.T) {
		spend(t, rate.Limit{Scope: otp.ScopeIP, Key: "2001:db8:7:7::/64", Rules: rules[otp.ScopeIP]})
		if b := getJSON[limitsBody](t, e, "/admin/api/limits?ip=2001:db8:7:7:1:2:3:4"); b.Target != "ip:2001:db8:7:7::/64" || b.rule("ip", "10/1h").Used != 1 {
			t.Fatalf("IPv6 lookup: got %+v, want its /64 with one use", b)
		}
		cookie, token := e.csrfSession(t)
		w := e.call(t, http.MethodDelete, "/admin/api/limits?ip=2001:db8:7:7::9", basic("support", testAdminToken),
			map[string]string{"Cookie": cookie.Name + "=" + cookie.Value, csrfHeader: token})
		if w.Code != http.StatusOK {
			t.Fatalf("got %d, want 200; body %s", w.Code, w.Body)
		}
		if b := getJSON[limitsBody](t, e, "/admin/api/limits?ip=2001:db8:7:7::1"); b.rule("ip", "10/1h").Used != 0 {
			t.Errorf("used after reset: got %d, want 0", b.rule("ip", "10/1h").Used)
		}
		actions, _ := e.store.AdminActions(ctx, 1)
		if len(actions) != 1 || actions[0].Target != "ip:2001:db8:7:7::/64" || !strings.Contains(actions[0].Detail, `console user "support"`) {
			t.Errorf("newest admin action: got %+v, want the IP reset by support", actions)
		}
	})
}
