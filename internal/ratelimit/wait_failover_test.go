package ratelimit

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/rate"
	"otpgate/internal/testenv"
)

// forgetful rolls back what every pipeline that WAITs wrote under prefix, once it has
// answered: as a master that dies with writes no replica got, and the replica promoted in
// its place, which the undo after the failed WAIT then reaches.
type forgetful struct {
	tb     testing.TB
	admin  *redis.Client
	prefix string
}

func (f forgetful) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (f forgetful) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (f forgetful) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		waits := false
		for _, c := range cmds {
			waits = waits || c.Name() == "wait"
		}
		if !waits {
			return next(ctx, cmds)
		}
		before := f.snapshot()
		err := next(ctx, cmds)
		f.restore(before)
		return err
	}
}

// snapshot dumps every key under the prefix.
func (f forgetful) snapshot() map[string]string {
	ctx := context.Background()
	keys, err := f.admin.Keys(ctx, f.prefix+"*").Result()
	if err != nil {
		f.tb.Errorf("KEYS: %v", err)
	}
	out := map[string]string{}
	for _, k := range keys {
		v, err := f.admin.Dump(ctx, k).Result()
		if err != nil {
			f.tb.Errorf("DUMP %s: %v", k, err)
		}
		out[k] = v
	}
	return out
}

// restore makes the keys under the prefix what snapshot saw.
func (f forgetful) restore(snap map[string]string) {
	ctx := context.Background()
	keys, err := f.admin.Keys(ctx, f.prefix+"*").Result()
	if err != nil {
		f.tb.Errorf("KEYS: %v", err)
	}
	if len(keys) > 0 {
		if err := f.admin.Del(ctx, keys...).Err(); err != nil {
			f.tb.Errorf("DEL: %v", err)
		}
	}
	for k, v := range snap {
		if err := f.admin.Restore(ctx, k, 0, v).Err(); err != nil {
			f.tb.Errorf("RESTORE %s: %v", k, err)
		}
	}
}

// TestWaitFailureTakesBackOnlyWhatTheMasterHolds is the failover of a spend budget at the
// limiter: ten sends reached the replicas, then four are recorded on a master that dies
// with them before any replica acknowledges; each fails closed, and its undo reaches the
// promoted replica, which never held it. The undo must take nothing back there: had it given
// back the four costs, the budget would admit four sends past its cap.
func TestWaitFailureTakesBackOnlyWhatTheMasterHolds(t *testing.T) {
	srv := testenv.StartRedis(t)
	rdb := serverClient(t, redis.Options{}, srv.Addr)
	prefix := testenv.KeyPrefix(t)
	b := budgetLimit(rate.BudgetEnforce, 1_000_000, 50_000)
	plain := New(rdb, prefix)
	for i := range 10 {
		if d := mustAllow(t, plain, phoneLimit(i), b); !d.Allowed {
			t.Fatalf("send %d: got refused, want admitted", i+1)
		}
	}

	rdb.AddHook(forgetful{tb: t, admin: serverClient(t, redis.Options{}, srv.Addr), prefix: prefix})
	waiting := New(rdb, prefix, WaitReplicas(1, waitTimeout)) // no replica acknowledges
	for i := 10; i < 14; i++ {
		d, err := bounded(waiting, waitTimeout, phoneLimit(i), b)
		wantUnavailable(t, d, err)
	}

	admitted := 0
	for i := 20; i < 40; i++ {
		if mustAllow(t, plain, phoneLimit(i), b).Allowed {
			admitted++
		}
	}
	if admitted != 10 {
		t.Errorf("after the failover the budget admitted %d sends, want 10: the cap of 1.00 holds 20 at 0.05, ten were spent", admitted)
	}
}
