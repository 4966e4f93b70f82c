package main

import (
	"context"
	"log/slog"

	"otpgate/internal/metrics"
	"otpgate/internal/notify"
	"otpgate/internal/otp"
	"otpgate/internal/spend"
)

// spendParts are the running pieces of the price table and the budgets.
type spendParts struct {
	reloader *spend.Reloader
	// step is the spend step of the service, counted by metrics.
	step  otp.Spend
	admin spend.AdminService
}

// newSpend builds the spend step over the store and Redis pub/sub and loads its
// configuration (the shipped price table and no budget until an operator changes it).
// It runs nothing yet. A budget is refused for an app that apps does not find.
func newSpend(ctx context.Context, cfg config, p *parts, mx *metrics.Metrics, log *slog.Logger, apps spend.AppDirectory) (*spendParts, error) {
	log = log.With("component", "spend")
	notifier := notify.New(p.redis, cfg.RedisPrefix+"spend:changed")
	r := spend.NewReloader(p.store, notifier, spend.DefaultConfig(), log)
	lctx, cancel := context.WithTimeout(ctx, fraudLoadTimeout)
	defer cancel()
	if err := r.Load(lctx); err != nil {
		return nil, err
	}
	admin := spend.NewAdmin(p.store, r)
	admin.Apps = apps
	return &spendParts{reloader: r, step: mx.Spend(spend.NewService(r, p.store, log)), admin: admin}, nil
}
