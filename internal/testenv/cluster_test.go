package testenv_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/testenv"
)

func TestRedisCluster(t *testing.T) {
	ctx := context.Background()
	c := testenv.RedisCluster(t)
	rdb := c.Client()

	t.Run("RoutesKeysToEveryMaster", func(t *testing.T) {
		const n = 60
		for i := range n {
			if err := rdb.Set(ctx, fmt.Sprintf("k%d", i), i, 0).Err(); err != nil {
				t.Fatalf("set k%d: %v", i, err)
			}
		}
		total := 0
		for _, addr := range c.Addrs {
			node := redis.NewClient(&redis.Options{Addr: addr})
			size, err := node.DBSize(ctx).Result()
			node.Close()
			if err != nil {
				t.Fatal(err)
			}
			if size == 0 {
				t.Errorf("got 0 keys on %s, want some", addr)
			}
			total += int(size)
		}
		if total != n {
			t.Errorf("got %d keys in total, want %d", total, n)
		}
	})

	t.Run("NodeRestartKeepsSlots", func(t *testing.T) {
		c.Stop(1)
		c.Start(1)
		fresh := c.Client()
		for i := range 30 {
			if err := fresh.Set(ctx, fmt.Sprintf("after%d", i), i, 0).Err(); err != nil {
				t.Fatalf("got %v for set after%d after restart, want nil", err, i)
			}
		}
	})
}

func TestRedisClusterWithReplicas(t *testing.T) {
	ctx := context.Background()
	c := testenv.RedisClusterWithReplicas(t)
	master := c.Node(c.Addrs[0])
	replica := c.ReplicaOf(master)
	if replica.Addr != c.Replicas[0] {
		t.Fatalf("got replica %s of the first master, want %s", replica.Addr, c.Replicas[0])
	}
	master.Stop()
	c.WaitFailover(master, replica)
	c.Rejoin(master)
	if got := c.ReplicaOf(replica); got != master {
		t.Errorf("after Rejoin: got %s replicating %s, want the old master %s", got.Addr, replica.Addr, master.Addr)
	}
	rdb := c.Client()
	for i := range 30 {
		if err := rdb.Set(ctx, fmt.Sprintf("after%d", i), i, 0).Err(); err != nil {
			t.Fatalf("got %v for set after%d after the failover, want nil", err, i)
		}
	}
}
