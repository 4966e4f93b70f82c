package server

import (
	"context"
	"log/slog"
	"net/http"

	"otpgate/internal/admin"
	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/idempotency"
	"otpgate/internal/operators"
	"otpgate/internal/otp"
	"otpgate/internal/pii"
	"otpgate/internal/rate"
	"otpgate/internal/spend"
)

// newAdminHandler serves the admin listener: the console and its API over the
// history store, the limiter, the apps and the fraud guard, plus /metrics, /healthz and /readyz.
func newAdminHandler(cfg config, p *parts, log *slog.Logger, limiter otp.Limiter, registry *apps.Registry, appAdmin apps.AdminService, fraud fraud.AdminService, spendAdmin spend.AdminService, webhooks events.AdminService, factors admin.TOTP, erasure admin.Erasure, ready func(context.Context) error, metrics http.Handler) http.Handler {
	// The rules the limits page shows for a phone or an IP.
	console := history.NewAdmin(p.store, limiter, []rate.Limit{
		{Scope: otp.ScopePhone, Rules: cfg.LimitPhone},
		{Scope: otp.ScopeIP, Rules: cfg.LimitIP},
		{Scope: otp.ScopeCheckPhone, Rules: cfg.LimitCheckPhone},
		{Scope: otp.ScopeCheckIP, Rules: cfg.LimitCheckIP},
	})
	console.LimiterTimeout = cfg.RedisTimeout
	// A phone's budget has a partition per public app and one for the key apps, each keyed
	// by the number's index, as the service keys them.
	console.AddressKeys = func(phone string) []string { return apps.AddressKeys(registry.Apps(), p.dataKeys.Index(phone)) }
	ops := operators.NewAdmin(p.store)
	ops.ClaimsRecheck = cfg.OIDCRecheck
	var signOn admin.SignOn
	if cfg.sso != nil {
		signOn = cfg.sso // a nil *sso.Client in the interface would not be nil
	}
	return admin.NewServer(admin.Deps{
		SignOn:          signOn,
		Logger:          log,
		Admin:           console,
		Erasure:         erasure,
		Apps:            appAdmin,
		Fraud:           fraud,
		Webhooks:        webhooks,
		TOTP:            factors,
		Operators:       ops,
		Roles:           cfg.roles,
		SessionSecret:   p.secret,
		SessionTTL:      cfg.AdminSessionTTL,
		InsecureCookies: cfg.insecureAdminCookies(),
		Token:           p.token,
		DefaultRegion:   string(cfg.DefaultRegion),
		IPv6Prefix:      cfg.IPv6Prefix,
		Ready:           ready,
		Metrics:         metrics,
		Spend:           spendAdmin,
	})
}

// newEraser is the erasure of one person's data (docs/privacy.md): the store's rows, the
// limiter keys of every partition of the address in every app, the stored responses that
// name it and this instance's memory of it.
func newEraser(cfg config, p *parts, limiter otp.Limiter, registry *apps.Registry, idem *idempotency.Store, svc *otp.Service) admin.Erasure {
	e := history.NewEraser(p.store, limiter, pii.Mask, func(address string) []rate.Limit {
		return apps.AddressLimits(registry.Apps(), address, p.dataKeys.Index(address))
	})
	e.LimiterTimeout = cfg.RedisTimeout
	e.Replays = idem.Forget
	e.Forget = func(address string) { svc.Forget(registry.Apps(), address) }
	return e
}
