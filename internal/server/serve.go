package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// serve runs both listeners and the background loops until ctx ends or SIGINT/SIGTERM
// arrives, then drains: readiness fails at once while both listeners keep serving for
// OTP_DRAIN_DELAY, then in-flight requests finish (bounded by OTP_SHUTDOWN_TIMEOUT), the
// loops stop phase by phase (background.go), writing what is queued, and the pools close.
func serve(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	tp, shutdownTraces, err := newTracerProvider(ctx, cfg)
	if err != nil {
		return err
	}
	// Deferred first, so it runs last: the spans of the last requests and loops are flushed.
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		if err := shutdownTraces(sctx); err != nil {
			log.Warn("traces: flush at shutdown", "err", err)
		}
	}()
	p, err := newParts(ctx, cfg, log, tp)
	if err != nil {
		return err
	}
	defer p.close()
	s, err := newServices(ctx, cfg, p, log)
	if err != nil {
		return err
	}
	ls, err := listen(cfg, s)
	if err != nil {
		return err
	}

	if cfg.dev {
		printDevBanner(stdout, p.token, p.accountToken)
	}
	fmt.Fprintf(stdout, "otpgate %s listening: api http://%s admin http://%s/admin/\n", Version, ls.public.Addr(), ls.admin.Addr())
	log.Info("listening", "api", ls.public.Addr().String(), "admin", ls.admin.Addr().String(), "dev_mode", cfg.dev)
	ls.serve()
	stopLoops := startLoops(ctx, log, s.loops(p))

	var runErr error
	select {
	case <-ctx.Done():
		// Fail readiness but keep serving for the drain delay, so that load balancers see
		// /readyz fail and stop routing here while requests sent meanwhile still get answers.
		runErr = drainDelay(log, cfg.DrainDelay, &s.draining, ls.errc)
	case runErr = <-ls.errc:
		// No delay: with a listener gone the instance is failing already.
		log.Error("listener failed", "err", runErr)
		s.draining.Store(true)
	}

	// Close the listeners and let what was accepted finish, on a fresh deadline rather
	// than ctx, which a signal has already ended; then stop the loops, which the requests fed.
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := ls.shutdown(sctx, log); err != nil {
		runErr = errors.Join(runErr, err)
	}
	stopLoops(sctx)
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

func printDevBanner(w io.Writer, token, accountToken string) {
	line := strings.Repeat("=", 72)
	fmt.Fprintf(w, "%s\n  DEV MODE — embedded Redis, in-memory store, codes printed to the log.\n"+
		"  Nothing is kept after exit. Set REDIS_URL and DATABASE_URL for production.\n"+
		"  Admin token (shown once): %s\n"+
		"  Twilio API account token (shown once; user: any AC sid): %s\n%s\n", line, token, accountToken, line)
}
