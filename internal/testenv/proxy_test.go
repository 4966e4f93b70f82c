package testenv_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"otpgate/internal/testenv"
)

func TestProxy(t *testing.T) {
	ctx := context.Background()

	t.Run("CutAndRestoreRedis", func(t *testing.T) {
		opts, err := redis.ParseURL(testenv.RedisURL(t))
		if err != nil {
			t.Fatal(err)
		}
		p := testenv.NewProxy(t, opts.Addr)
		rdb := redis.NewClient(&redis.Options{Addr: p.Addr, DB: opts.DB, Password: opts.Password, MaxRetries: -1})
		defer rdb.Close()
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatalf("got %v through the proxy, want PONG", err)
		}
		p.Cut()
		if err := rdb.Ping(ctx).Err(); err == nil {
			t.Fatalf("got PONG on a cut connection, want an error")
		}
		if err := rdb.Ping(ctx).Err(); err == nil {
			t.Fatalf("got PONG on a new connection while cut, want an error")
		}
		p.Restore()
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatalf("got %v after restore, want PONG", err)
		}
	})

	t.Run("CutAndRestorePostgres", func(t *testing.T) {
		dsn := testenv.PostgresDSN(t)
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		p := testenv.NewProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
		via := p.Via(dsn)
		conn := connect(t, via)
		p.Cut()
		if err := conn.Ping(ctx); err == nil {
			t.Fatalf("got a ping through a cut proxy, want an error")
		}
		short, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if c, err := pgx.Connect(short, via); err == nil {
			c.Close(ctx)
			t.Fatalf("got a new connection while cut, want an error")
		}
		p.Restore()
		again := connect(t, via)
		if err := again.Ping(ctx); err != nil {
			t.Fatalf("got %v after restore, want nil", err)
		}
	})
}
