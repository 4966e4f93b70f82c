package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// Option configures a Limiter at New.
type Option func(*options)

// options are what the Options set.
type options struct {
	replicas    int
	waitTimeout time.Duration
	tracer      trace.TracerProvider
}

// Tracing makes every script call a span of tp (docs/traces.md): its mode, how many keys
// it touched and its status, never a key, since keys hold numbers and addresses.
func Tracing(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracer = tp }
}

// WaitReplicas makes every allowing decision prove that it reached n replicas before it
// counts: the script call is followed, in the same round trip, by WAIT n, which waits at
// most half of timeout or of the time left before the call's deadline (see waitFor; the
// server passes OTP_REDIS_TIMEOUT, its socket timeout too). With fewer acknowledgements the
// reservation is refunded and Allow fails closed with an error wrapping otp.ErrUnavailable,
// so a failover that promotes an acknowledging replica cannot forget what was admitted.
// n ≤ 0 waits for nothing, which is the default.
func WaitReplicas(n int, timeout time.Duration) Option {
	return func(o *options) { o.replicas, o.waitTimeout = n, timeout }
}

// errNotReplicated means a decision recorded, or may have recorded, the request on a
// master without proof that enough replicas hold it; the caller must refund it.
var errNotReplicated = errors.New("reservation not known to have reached enough replicas")

// pipeliner is the client of one Redis server (or of a Sentinel's master) that WAIT runs on.
type pipeliner interface {
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// waiter runs allowing script calls followed by WAIT on the server that holds their keys.
type waiter struct {
	replicas int
	timeout  time.Duration
	// node returns the client of the server holding key: the master of its slot on a
	// cluster, where a pipeline of the cluster client would send the keyless WAIT to every
	// shard (its request policy) instead of the one the script wrote to.
	node func(ctx context.Context, key string) (pipeliner, error)
	// stale tells a cluster client that its slot map may be out of date: a node client
	// follows no MOVED redirect and, after a failover, keeps dialling the dead master
	// until the cluster client reloads its map.
	stale func()
}

// newWaiter returns the waiter of the options, or nil when they wait for nothing.
func newWaiter(rdb redis.UniversalClient, o options) *waiter {
	if o.replicas <= 0 {
		return nil
	}
	w := &waiter{replicas: o.replicas, timeout: o.waitTimeout, stale: func() {}}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		w.node = func(ctx context.Context, key string) (pipeliner, error) { return c.MasterForKey(ctx, key) }
		w.stale = func() { c.ReloadState(context.Background()) }
	case *redis.Ring:
		w.node = func(_ context.Context, key string) (pipeliner, error) { return c.GetShardClientForKey(key) }
	default:
		w.node = func(context.Context, string) (pipeliner, error) { return rdb, nil }
	}
	return w
}

// eval runs the script for one call of run: as it is, or, for an allowing decision of a
// limiter that waits for replicas, followed by WAIT in the same round trip.
func (l *Limiter) eval(ctx context.Context, mode string, keys []string, args []any) ([]int64, error) {
	if l.wait == nil || mode != modeAllow {
		return l.script.Run(ctx, l.rdb, keys, args...).Int64Slice()
	}
	return l.wait.eval(ctx, l.script, keys, args)
}

// eval sends EVALSHA and WAIT in one pipeline to the server holding keys (EVAL after
// NOSCRIPT, as Script.Run does) and returns the script's reply. A call that recorded, or
// may have recorded, the request without proof that enough replicas hold it is an error
// wrapping errNotReplicated: too few acknowledgements, a failed WAIT, a connection lost
// after the script was sent, or a replayed decision. A replay is a retry that found its
// own earlier reservation, written on a connection that may be gone, and WAIT only vouches
// for the writes of the connection it runs on. Denied decisions wrote nothing, so their
// WAIT is ignored.
func (w *waiter) eval(ctx context.Context, s *redis.Script, keys []string, args []any) ([]int64, error) {
	node, err := w.node(ctx, keys[0])
	if err != nil {
		w.stale()
		return nil, err
	}
	script, acked := w.pipeline(ctx, node, func(p redis.Pipeliner) *redis.Cmd { return s.EvalSha(ctx, p, keys, args...) })
	if err := script.Err(); errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT") {
		script, acked = w.pipeline(ctx, node, func(p redis.Pipeliner) *redis.Cmd { return s.Eval(ctx, p, keys, args...) })
	}
	reply, err := answered(script)
	if err != nil {
		w.stale()
		if mayHaveRun(err) {
			return nil, fmt.Errorf("%w: %w", errNotReplicated, err)
		}
		return nil, err
	}
	if len(reply) == 0 {
		return reply, nil // run reports the bad shape
	}
	switch reply[0] {
	case statusAllowed:
		n, err := acked.Result()
		if err != nil {
			w.stale()
			return nil, fmt.Errorf("%w: wait: %w", errNotReplicated, err)
		}
		if n < int64(w.replicas) {
			return nil, fmt.Errorf("%w: %d of %d replicas acknowledged in time", errNotReplicated, n, w.replicas)
		}
	case statusReplayed:
		return nil, fmt.Errorf("%w: a retried call found its reservation already recorded, and WAIT cannot vouch for it", errNotReplicated)
	}
	return reply, nil
}

// pipeline sends the script call and WAIT together; their replies or errors are in the
// commands, which is where eval looks.
func (w *waiter) pipeline(ctx context.Context, node pipeliner, call func(redis.Pipeliner) *redis.Cmd) (*redis.Cmd, *redis.IntCmd) {
	var script *redis.Cmd
	var acked *redis.IntCmd
	_, _ = node.Pipelined(ctx, func(p redis.Pipeliner) error {
		script = call(p)
		// Pipeliner lacks the Wait helper; this is the command it would queue.
		acked = redis.NewIntCmd(ctx, "wait", w.replicas, w.waitFor(ctx).Milliseconds())
		return p.Process(ctx, once{acked})
	})
	return script, acked
}

// once marks a command so that go-redis does not retry the pipeline that holds it. A retry
// after a lost connection or a late answer would run the script again, as a replay that
// fails closed when the first attempt had run, and its error would overwrite the script's
// first reply, turning a denial into a failure; one attempt keeps every outcome what it was.
type once struct{ *redis.IntCmd }

// NoRetry tells go-redis not to retry.
func (once) NoRetry() bool { return true }

// answered returns the script's reply when one arrived, also when something later in its
// pipeline failed: go-redis then gives every command of the pipeline the failure, those that
// were answered too.
func answered(script *redis.Cmd) ([]int64, error) {
	if script.Err() != nil && script.Val() != nil {
		return redis.NewCmdResult(script.Val(), nil).Int64Slice()
	}
	return script.Int64Slice()
}

// mayHaveRun reports whether a script call that failed with err may have run all the same:
// unless Redis answered with an error, or the connection was never made, the request
// may have reached it before the connection failed or the deadline passed.
func mayHaveRun(err error) bool {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return false
	}
	var oe *net.OpError
	return !errors.As(err, &oe) || oe.Op != "dial"
}

// waitBound stands in for WaitReplicas' timeout when it is not positive.
const waitBound = time.Second

// waitFor returns WAIT's timeout: half of the option's timeout or of the time left before
// the caller's deadline, whichever is shorter, and at least a millisecond, since WAIT with
// 0 would block for ever. Redis ends a blocked command on its timer, which ticks ten times
// a second by default (hz), so WAIT may answer up to 100ms after its timeout; the other
// half leaves its answer room to arrive before the deadline, or before the socket's read
// timeout, which the server sets to the same OTP_REDIS_TIMEOUT. An answer that comes too
// late all the same fails closed like too few acknowledgements, only on a lost connection.
func (w *waiter) waitFor(ctx context.Context) time.Duration {
	d := w.timeout
	if d <= 0 {
		d = waitBound
	}
	if deadline, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(deadline))
	}
	return max(d/2, time.Millisecond)
}

// recorded returns the groups that hold the request after groups[i] failed with err: the
// earlier ones, and groups[i] too when it recorded the request without proof that it
// reached the replicas.
func recorded(groups [][]int, i int, err error) [][]int {
	if errors.Is(err, errNotReplicated) {
		return groups[:i+1]
	}
	return groups[:i]
}
