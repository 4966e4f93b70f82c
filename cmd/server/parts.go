package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	oteltrace "go.opentelemetry.io/otel/trace"

	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/persistence"
	"otpgate/internal/pii"
	"otpgate/internal/postgres"
	"otpgate/internal/retention"
)

// parts are the backing pieces of one server, dev or production.
type parts struct {
	// tracer is what every part traces with: the no-op provider when tracing is off.
	tracer oteltrace.TracerProvider
	redis  redis.UniversalClient
	// store is every feature's store in one value: the in-memory one in dev mode,
	// PostgreSQL in production. Each feature is handed it as its own small interface.
	store persistence.Store
	// denied records refused sends: the store itself in dev mode, the batch writer in
	// production.
	denied otp.DeniedRecorder
	secret []byte
	// dataKeys seal and index phone numbers and email addresses at rest.
	dataKeys *pii.Keys
	token    string
	// accountToken is the Twilio API's account credential (OTP_ACCOUNT_TOKEN); dev mode
	// makes one up when it is unset.
	accountToken string
	// batch is the production history writer, flushed at shutdown; nil in dev mode.
	batch *postgres.BatchWriter
	// outcomes writes how sends ended, flushed at shutdown; sweeper settles sends whose
	// outcome a stopped server never wrote. Both nil in dev mode, which keeps nothing
	// across a restart.
	outcomes *postgres.OutcomeWriter
	sweeper  *postgres.Sweeper
	// resealer brings stored addresses under the current data key (and converts those
	// written before they were sealed); nil in dev mode, which seals nothing.
	resealer *postgres.Resealer
	// lifecycle is the store as the retention job sees it, nil in dev mode, which keeps
	// history in memory until it exits.
	lifecycle retention.Store
	// closers run in reverse order at shutdown.
	closers []func()
}

func (p *parts) close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
}

// newParts builds the parts of the mode cfg asks for.
func newParts(ctx context.Context, cfg config, log *slog.Logger, tp oteltrace.TracerProvider) (*parts, error) {
	var p *parts
	var err error
	if cfg.dev {
		p, err = devParts(cfg)
	} else {
		p, err = prodParts(ctx, cfg, log, tp)
	}
	if err != nil {
		return nil, err
	}
	p.tracer = tp
	return p, nil
}

// devParts builds the embedded dev setup: miniredis running the same Lua, an
// in-memory store and a random secret and admin token.
func devParts(cfg config) (*parts, error) {
	p := &parts{}
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		return nil, fmt.Errorf("dev mode: start embedded redis: %w", err)
	}
	p.closers = append(p.closers, mr.Close)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), ContextTimeoutEnabled: true})
	p.closers = append(p.closers, func() { rdb.Close() })
	p.redis = rdb

	mem := inmem.New()
	p.store, p.denied = mem, mem

	p.secret = []byte(cfg.Secret)
	if len(p.secret) == 0 {
		p.secret = randomBytes(32)
	}
	keys, err := dataKeys(cfg, p.secret)
	if err != nil {
		p.close()
		return nil, err
	}
	p.dataKeys = keys
	p.token = cfg.AdminToken
	if p.token == "" {
		p.token = hex.EncodeToString(randomBytes(16))
	}
	p.accountToken = cfg.AccountToken
	if p.accountToken == "" {
		p.accountToken = hex.EncodeToString(randomBytes(16))
	}
	return p, nil
}

// prodParts connects to the configured Redis and Postgres.
func prodParts(ctx context.Context, cfg config, log *slog.Logger, tp oteltrace.TracerProvider) (*parts, error) {
	p := &parts{secret: []byte(cfg.Secret), token: cfg.AdminToken, accountToken: cfg.AccountToken}
	keys, err := dataKeys(cfg, p.secret)
	if err != nil {
		return nil, err
	}
	p.dataKeys = keys
	rdb, err := newRedis(cfg.RedisURL, cfg.RedisTimeout, redisTLS{caFile: cfg.RedisCAFile, certFile: cfg.RedisCertFile, keyFile: cfg.RedisKeyFile})
	if err != nil {
		return nil, err
	}
	p.closers = append(p.closers, func() { rdb.Close() })
	p.redis = rdb

	pool, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.Tracing(tp))
	if err != nil {
		p.close()
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	p.closers = append(p.closers, pool.Close)
	if cfg.MigrateOnStart {
		if err := postgres.Migrate(ctx, pool); err != nil {
			p.close()
			return nil, err
		}
	}
	store := postgres.New(pool, keys)
	p.outcomes = postgres.NewOutcomeWriter(pool, log, postgres.BatchOptions{QueueSize: cfg.HistoryQueue})
	store.Outcomes = p.outcomes
	p.sweeper = postgres.NewSweeper(store, log, postgres.SweeperOptions{After: cfg.deliveryTimeout() + cfg.SweepMargin, Interval: cfg.SweepInterval})
	p.resealer = postgres.NewResealer(store, log.With("component", "reseal"), postgres.ResealerOptions{})
	p.store, p.lifecycle = store, store
	p.batch = postgres.NewBatchWriter(pool, keys, log, postgres.BatchOptions{QueueSize: cfg.HistoryQueue})
	p.denied = p.batch
	return p, nil
}

// migrate is the `migrate` subcommand: apply the schema and exit.
func migrate(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	dsn := getenv("DATABASE_URL")
	if dsn == "" {
		return errors.New("migrate: DATABASE_URL is required")
	}
	pool, err := postgres.Open(ctx, dsn)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer pool.Close()
	if err := postgres.Migrate(ctx, pool); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return b
}
