package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	otphttp "otpgate/internal/http"
	"otpgate/internal/idempotency"
	"otpgate/internal/metrics"
	"otpgate/internal/otp"
	"otpgate/internal/ratelimit"
	"otpgate/internal/receipt"
	"otpgate/internal/retention"
	"otpgate/internal/tokens"
	"otpgate/internal/totp"
	"otpgate/internal/tracing"
	"otpgate/internal/twilioapi"
	"otpgate/internal/web"
)

// How many verifications' origins an instance remembers, and for how long: enough for
// the events of the verifications of the last hour at a busy instance's pace; older ones'
// deliveries start traces of their own.
const (
	originsKept = 100_000
	originsFor  = time.Hour
)

// services are what the listeners serve and the background loops keep current, built
// over the parts.
type services struct {
	// public and admin are the handlers of the two listeners.
	public, admin http.Handler
	// draining fails readiness on both listeners once the server is stopping.
	draining  atomic.Bool
	registry  *apps.Registry
	fraud     *fraudParts
	spend     *spendParts
	events    *eventLoops
	retention *retention.Job // nil while OTP_HISTORY_RETENTION is off
	// tokenKeys are the verification tokens' signing keys, rotated by their loop.
	tokenKeys *tokens.Ring
}

// newServices builds the service and everything around it over p: metrics decorating what
// it uses, the apps registry and the fraud guard loaded from the store, the retention job,
// the event loops and the handlers of both listeners. It runs nothing yet.
func newServices(ctx context.Context, cfg config, p *parts, log *slog.Logger) (*services, error) {
	s := &services{}
	// Metrics: decorators around what the service uses, served on the admin listener.
	mx := metrics.New()
	if h, ok := p.denied.(interface {
		QueueDepth() int
		Dropped() uint64
		Written() uint64
	}); ok {
		mx.History(h.QueueDepth, h.Dropped, h.Written)
	}
	if p.outcomes != nil {
		mx.Outcomes(p.outcomes.QueueDepth, p.outcomes.Lost, p.outcomes.Written, p.sweeper.Lag, p.sweeper.Settled)
	}
	if p.resealer != nil {
		mx.Resealed(p.resealer.Converted)
	}
	rl := ratelimit.New(p.redis, cfg.RedisPrefix+"rl:", ratelimit.WaitReplicas(cfg.RedisWaitReplicas, cfg.RedisTimeout), ratelimit.Tracing(p.tracer))
	limiter := mx.Limiter(rl)
	dp, err := newDelivery(cfg, log, mx, p.tracer)
	if err != nil {
		return nil, err
	}
	svcCfg := cfg.serviceConfig(p.secret)
	// Addresses reach Redis as their keyed index only (docs/privacy.md).
	svcCfg.AddressIndex = p.dataKeys.Index
	// With tracing on, the trace each verification began in is remembered for the
	// deliveries of its events (tracing.Origins).
	var origins *tracing.Origins
	if !tracing.Off(p.tracer) {
		origins = tracing.NewOrigins(originsKept, originsFor)
	}
	// With tracing on, a traced send keeps its trace context in the store, and its
	// receipt and its verification's checks join its trace (tracing.Joined).
	store := tracing.Joined(tracing.Store(mx.Store(p.store), origins), p.store, p.tracer)
	svc := otp.NewService(svcCfg, store, limiter, dp.router, dp.renderer, p.denied, log)
	receipts := receipt.New(mx.Receipts(tracing.Receipts(p.store, p.store, p.tracer)), dp.readers)
	receipts.Timeout = cfg.DBTimeout
	receipts.Log = log
	s.registry = apps.NewRegistry(p.store, svcCfg.DefaultApp(), log)
	s.registry.Timeout = cfg.DBTimeout
	if s.registry.Sealer, err = apps.NewCodeSealer(p.secret); err != nil {
		return nil, err
	}
	if err := s.registry.Reload(ctx); err != nil {
		return nil, err
	}
	if s.fraud, err = newFraud(ctx, cfg, p, rl, mx, log); err != nil {
		return nil, err
	}
	svc.UseFraud(s.fraud.guard)
	if s.spend, err = newSpend(ctx, cfg, p, mx, log, s.registry); err != nil {
		return nil, err
	}
	svc.UseSpend(s.spend.step)
	challenger, err := cfg.newChallenger(p.secret, captchaClient(cfg))
	if err != nil {
		return nil, err
	}
	svc.UseChallenger(challenger)
	if keep := time.Duration(cfg.HistoryRetention); keep > 0 && p.lifecycle != nil {
		s.retention = retention.New(p.lifecycle, log.With("component", "retention"), retention.Options{
			Retention: keep, Interval: cfg.RetentionInterval,
			PrefixDrop: func() int { return s.fraud.reloader.Snapshot().Config.PrefixDrop },
		})
		mx.Retention(s.retention.Targets(), s.retention.Purged, s.retention.Behind, s.retention.RolledHours, s.retention.LastPass)
	}
	if s.events, err = newEventLoops(cfg, p, log, mx, origins); err != nil {
		return nil, err
	}

	totpSealer, err := totp.NewSealer(p.secret)
	if err != nil {
		return nil, err
	}
	// TOTP guesses pass the same limiter (and its metrics) as every send and check.
	factors := totp.NewService(p.store, limiter, totpSealer, svc.NewID)

	tokenService, tokenKeys, err := newTokens(ctx, cfg, p, log)
	if err != nil {
		return nil, err
	}
	s.tokenKeys = tokenKeys

	ready := s.readiness(p)
	verifier := mx.Verifier(svc)
	appAdmin := apps.NewAdmin(p.store, s.registry)
	appAdmin.DefaultRegion = string(cfg.DefaultRegion)
	idem := newIdempotency(cfg, p)
	// The demo page is dev mode's: production answers /demo 404, as any unknown path.
	var demo http.Handler
	if cfg.dev {
		demo = web.Demo(log)
	}
	s.public = tracing.Handler(p.tracer, "public", otphttp.NewServer(otphttp.Deps{
		Logger:   log,
		Verifier: verifier,
		Apps:     s.registry,
		Twilio: twilioapi.NewHandler(twilioapi.Deps{
			Logger: log, Verifier: verifier, Manager: svc, Apps: s.registry,
			ClientIP:  func(r *http.Request, k apps.Key) (string, error) { return otphttp.CallerIP(r, k, cfg.IPv6Prefix) },
			PublicURL: cfg.PublicURL,
			Admin:     appAdmin, Attempts: p.store, Texts: dp.catalog, AccountToken: p.accountToken,
			TOTP:       factors,
			RateLimits: apps.NewRateLimitService(p.store),
		}),
		TOTP:           factors,
		Tokens:         tokenService,
		Idempotency:    idem,
		Receipts:       mx.ReceiptReceiver(receipts, dp.receiptKinds...),
		TrustedProxies: cfg.TrustedProxies,
		IPv6Prefix:     cfg.IPv6Prefix,
		Ready:          ready,
		Observe:        mx.ObserveHTTP,
		Component:      web.Script(),
		Demo:           demo,
	}))
	webhooks := events.NewAdmin(p.store, appAdmin, s.events.sealer, cfg.eventOptions())
	s.admin = tracing.Handler(p.tracer, "admin", newAdminHandler(cfg, p, log, limiter, s.registry, appAdmin, s.fraud.admin, s.spend.admin, webhooks, factors,
		newEraser(cfg, p, limiter, s.registry, idem, svc), ready, mx.Handler()))
	return s, nil
}

// readiness is /readyz of both listeners: failing from the stop on, else Redis and the
// store must answer.
func (s *services) readiness(p *parts) func(context.Context) error {
	return func(ctx context.Context) error {
		if s.draining.Load() {
			return errors.New("shutting down")
		}
		if err := p.redis.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("redis: %w", err)
		}
		if err := p.store.Ping(ctx); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		return nil
	}
}

// newIdempotency is the Idempotency-Key store of the public API.
func newIdempotency(cfg config, p *parts) *idempotency.Store {
	idem := idempotency.New(p.redis, cfg.RedisPrefix+"idem:", cfg.IdempotencyTTL)
	// A request holds its key while it runs; the key must outlive the slowest send, or a
	// retry could send a second SMS while the first is still on its way.
	idem.Timeout = cfg.RedisTimeout
	// A stored response names the address it was for (docs/privacy.md).
	idem.Sealer = p.dataKeys
	idem.LockTTL = max(idempotency.DefaultLockTTL, 2*(cfg.deliveryTimeout()+2*cfg.DBTimeout+2*cfg.RedisTimeout))
	return idem
}
