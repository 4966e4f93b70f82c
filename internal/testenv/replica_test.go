package testenv_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/testenv"
)

// acks writes a key on the master and returns how many replicas acknowledged it within d.
func acks(tb testing.TB, master *redis.Client, d time.Duration) int64 {
	tb.Helper()
	ctx := context.Background()
	var wait *redis.IntCmd
	if _, err := master.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "k", time.Now().String(), 0)
		wait = redis.NewIntCmd(ctx, "wait", 1, d.Milliseconds())
		return p.Process(ctx, wait)
	}); err != nil {
		tb.Fatalf("SET, WAIT: %v", err)
	}
	return wait.Val()
}

func TestStartReplica(t *testing.T) {
	master := testenv.StartRedis(t)
	replica := testenv.StartReplica(t, master)
	mrdb := redis.NewClient(&redis.Options{Addr: master.Addr, ReadTimeout: 10 * time.Second})
	defer mrdb.Close()

	t.Run("AcknowledgesWritesAtOnce", func(t *testing.T) {
		if got := acks(t, mrdb, 5*time.Second); got != 1 {
			t.Errorf("got %d acknowledgements, want 1", got)
		}
		if got, err := replica.Client().Get(context.Background(), "k").Result(); err != nil || got == "" {
			t.Errorf("got %q (%v) on the replica, want the master's value", got, err)
		}
	})

	t.Run("PausedReplicaAcknowledgesNothing", func(t *testing.T) {
		replica.Pause()
		got := acks(t, mrdb, 200*time.Millisecond)
		replica.Resume()
		if got != 0 {
			t.Errorf("got %d acknowledgements, want 0", got)
		}
		if got := acks(t, mrdb, 5*time.Second); got != 1 {
			t.Errorf("after Resume: got %d acknowledgements, want 1", got)
		}
	})

	t.Run("CutReplicaGetsNothingMore", func(t *testing.T) {
		master.CutReplicas()
		if got := acks(t, mrdb, 200*time.Millisecond); got != 0 {
			t.Errorf("got %d acknowledgements, want 0", got)
		}
		// Given the time to reconnect, the replica is still refused.
		time.Sleep(1500 * time.Millisecond)
		if err := mrdb.Set(context.Background(), "cut", 1, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := replica.Client().Get(context.Background(), "cut").Err(); !errors.Is(err, redis.Nil) {
			t.Errorf("got %v for a key written after the cut, want redis.Nil on the replica", err)
		}
	})
}

func TestRedisSentinel(t *testing.T) {
	s := testenv.RedisSentinel(t)
	master := s.Master()
	if master != s.Nodes[0] {
		t.Fatalf("got master %s, want %s", master.Addr, s.Nodes[0].Addr)
	}
	replica := s.Replica()
	master.Stop()
	promoted := s.WaitFailover(master)
	if promoted != replica {
		t.Errorf("got %s promoted, want the replica %s", promoted.Addr, replica.Addr)
	}
	s.Rejoin(master)
	if got := s.Replica(); got != master {
		t.Errorf("after Rejoin: got replica %s, want the old master %s", got.Addr, master.Addr)
	}
	rdb := redis.NewClient(&redis.Options{Addr: promoted.Addr, ReadTimeout: 10 * time.Second})
	defer rdb.Close()
	if got := acks(t, rdb, 5*time.Second); got != 1 {
		t.Errorf("new master: got %d acknowledgements, want 1 from the rejoined node", got)
	}
}
