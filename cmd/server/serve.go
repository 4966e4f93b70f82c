package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	otphttp "otpgate/internal/http"
	"otpgate/internal/idempotency"
	"otpgate/internal/metrics"
	"otpgate/internal/otp"
	"otpgate/internal/ratelimit"
	"otpgate/internal/retention"
	"otpgate/internal/twilioapi"
)

// serve runs both listeners until ctx ends or SIGINT/SIGTERM arrives, then drains:
// readiness fails at once while both listeners keep serving for OTP_DRAIN_DELAY, then
// in-flight requests finish (bounded by OTP_SHUTDOWN_TIMEOUT), the history writer
// flushes, and the pools close.
func serve(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)

	var p *parts
	if cfg.dev {
		p, err = devParts(cfg)
	} else {
		p, err = prodParts(ctx, cfg, log)
	}
	if err != nil {
		return err
	}
	defer p.close()

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
	rl := ratelimit.New(p.redis, cfg.RedisPrefix+"rl:", ratelimit.WaitReplicas(cfg.RedisWaitReplicas, cfg.RedisTimeout))
	limiter := mx.Limiter(rl)
	dp, err := newDelivery(cfg, log, mx)
	if err != nil {
		return err
	}
	svcCfg := cfg.serviceConfig(p.secret)
	svc := otp.NewService(svcCfg, mx.Store(p.store), limiter, dp.router, dp.renderer, p.denied, log)
	receipts := otp.NewReceipts(mx.Receipts(p.receipts), dp.readers)
	receipts.Timeout = cfg.DBTimeout
	registry := apps.NewRegistry(p.apps, svcCfg.DefaultApp(), log)
	registry.Timeout = cfg.DBTimeout
	if err := registry.Reload(ctx); err != nil {
		return err
	}
	fr, err := newFraud(ctx, cfg, p, rl, mx, log)
	if err != nil {
		return err
	}
	svc.UseFraud(fr.guard)
	if keep := time.Duration(cfg.HistoryRetention); keep > 0 {
		job := retention.New(p.lifecycle, log.With("component", "retention"), retention.Options{
			Retention: keep, Interval: cfg.RetentionInterval,
			PrefixDrop: func() int { return fr.reloader.Snapshot().Config.PrefixDrop },
		})
		mx.Retention(job.Targets(), job.Purged, job.Behind, job.RolledHours, job.LastPass)
		p.retention = job
	}
	ev, err := newEventLoops(cfg, p, log, mx)
	if err != nil {
		return err
	}

	var draining atomic.Bool
	ready := func(ctx context.Context) error {
		if draining.Load() {
			return errors.New("shutting down")
		}
		if err := p.redis.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("redis: %w", err)
		}
		if err := p.pingStore(ctx); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		return nil
	}

	idem := idempotency.New(p.redis, cfg.RedisPrefix+"idem:", cfg.IdempotencyTTL)
	// A request holds its key while it runs; the key must outlive the slowest send, or a
	// retry could send a second SMS while the first is still on its way.
	idem.Timeout = cfg.RedisTimeout
	idem.LockTTL = max(idempotency.DefaultLockTTL, 2*(cfg.deliveryTimeout()+2*cfg.DBTimeout+2*cfg.RedisTimeout))

	verifier := mx.Verifier(svc)
	public := otphttp.NewServer(otphttp.Deps{
		Logger:   log,
		Verifier: verifier,
		Apps:     registry,
		Twilio: twilioapi.NewHandler(twilioapi.Deps{
			Logger: log, Verifier: verifier, Manager: svc, Apps: registry,
			ClientIP: func(r *http.Request, k apps.Key) (string, error) { return otphttp.CallerIP(r, k, cfg.IPv6Prefix) },
		}),
		Idempotency:    idem,
		Receipts:       receipts,
		TrustedProxies: cfg.TrustedProxies,
		IPv6Prefix:     cfg.IPv6Prefix,
		Ready:          ready,
		Observe:        mx.ObserveHTTP,
	})
	appAdmin := apps.NewAdmin(p.apps, registry)
	webhooks := events.NewAdmin(p.events, appAdmin, ev.sealer, cfg.eventOptions())
	admin := newAdminHandler(cfg, p, log, limiter, appAdmin, fr.admin, webhooks, ready, mx.Handler())

	publicLn, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("OTP_HTTP_ADDR=%s: %w", cfg.HTTPAddr, err)
	}
	adminLn, err := net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		publicLn.Close()
		return fmt.Errorf("OTP_ADMIN_ADDR=%s: %w", cfg.AdminAddr, err)
	}

	if cfg.dev {
		printDevBanner(stdout, p.token)
	}
	fmt.Fprintf(stdout, "otpgate %s listening: api http://%s admin http://%s/admin/\n", version, publicLn.Addr(), adminLn.Addr())
	log.Info("listening", "api", publicLn.Addr().String(), "admin", adminLn.Addr().String(), "dev_mode", cfg.dev)

	servers := []*http.Server{
		{Handler: public, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second},
		{Handler: admin, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second},
	}
	errc := make(chan error, len(servers)+1)
	var wg sync.WaitGroup
	for i, ln := range []net.Listener{publicLn, adminLn} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := servers[i].Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	stopBackground := p.startBackground(log, ev)
	registryDone := make(chan struct{})
	registryCtx, stopRegistry := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		defer close(registryDone)
		_ = registry.Run(registryCtx) // ends only when stopped
	}()
	batchDone := make(chan struct{})
	batchCtx, stopBatch := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		defer close(batchDone)
		if p.batch != nil {
			if err := p.batch.Run(batchCtx); err != nil && !errors.Is(err, context.Canceled) {
				log.Error("history writer stopped", "err", err)
			}
		}
	}()
	// The fraud configuration follows the database until the listeners are closed.
	fraudCtx, stopFraud := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFraud()
	go func() { _ = fr.reloader.Run(fraudCtx) }()

	var runErr error
	select {
	case <-ctx.Done():
		// Fail readiness but keep serving for the drain delay, so that load balancers see
		// /readyz fail and stop routing here while requests sent meanwhile still get answers.
		runErr = drainDelay(log, cfg.DrainDelay, &draining, errc)
	case runErr = <-errc:
		// No delay: with a listener gone the instance is failing already.
		log.Error("listener failed", "err", runErr)
		draining.Store(true)
	}

	// Close the listeners and let what was accepted finish, on a fresh deadline rather
	// than ctx, which a signal has already ended.
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(sctx); err != nil {
			log.Error("shutdown", "err", err)
			runErr = errors.Join(runErr, fmt.Errorf("shutdown: %w", err))
		}
	}
	wg.Wait()
	stopRegistry()
	<-registryDone
	stopBatch()
	<-batchDone
	if p.batch != nil {
		if err := p.batch.Close(sctx); err != nil {
			log.Error("history writer flush", "err", err)
		}
	}
	stopBackground(sctx)
	log.Info("stopped")
	return runErr
}

// drainDelay marks the server as draining and waits out delay while the listeners serve
// on. A second SIGINT or SIGTERM cuts the wait short, for an operator who wants the
// process gone now; so does a listener that fails, whose error it returns.
func drainDelay(log *slog.Logger, delay time.Duration, draining *atomic.Bool, errc <-chan error) error {
	// Listen for the second signal before readiness fails, so that whoever sees /readyz fail
	// can count on it being heard. The first one's handler stays registered until serve
	// returns, so no signal in between falls through to the default action.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	draining.Store(true)
	log.Info("draining: readiness fails, still serving", "delay", delay.String())
	if delay == 0 {
		return nil
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case sig := <-sigs:
		log.Info("drain delay cut short", "signal", sig.String())
		return nil
	case err := <-errc:
		log.Error("listener failed", "err", err)
		return err
	}
}

func newLogger(cfg config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel.Level}
	if cfg.dev {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func printDevBanner(w io.Writer, token string) {
	line := strings.Repeat("=", 72)
	fmt.Fprintf(w, "%s\n  DEV MODE — embedded Redis, in-memory store, codes printed to the log.\n"+
		"  Nothing is kept after exit. Set REDIS_URL and DATABASE_URL for production.\n"+
		"  Admin token (shown once): %s\n%s\n", line, token, line)
}
