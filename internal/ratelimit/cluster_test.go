package ratelimit

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/rate"
	"otpgate/internal/testenv"
)

func TestBySlot(t *testing.T) {
	// Slots as CLUSTER KEYSLOT reports them: "foo" 12182, "a" 15495, "{foo}x" 12182 (its
	// hash tag is "foo"), "{user1000}.following" 3443.
	keys := []string{"foo", "a", "{foo}x", "{user1000}.following"}
	got := bySlot(keys)
	want := [][]int{{3}, {0, 2}, {1}}
	if !slices.EqualFunc(got, want, slices.Equal[[]int]) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// keyIn returns the first key from, from+1, ... (formatted by format) of scope whose slot
// lies in [lo, hi].
func keyIn(l *Limiter, scope, format string, from, lo, hi int) string {
	for i := from; ; i++ {
		k := fmt.Sprintf(format, i)
		if s := slot(l.Key(scope, k)); s >= lo && s <= hi {
			return k
		}
	}
}

// twoSlots returns a phone and an IP limit whose keys lie on different masters (testenv
// splits the slots evenly), the phone's slot below the IP's when phoneFirst. Different
// rounds get different keys.
func twoSlots(tb testing.TB, l *Limiter, rules string, phoneFirst bool, round int) (phone, ip rate.Limit) {
	tb.Helper()
	low, high := [2]int{0, 5000}, [2]int{11000, 16383}
	if !phoneFirst {
		low, high = high, low
	}
	phone = rate.Limit{Scope: "phone", Key: keyIn(l, "phone", "+8190%08d", round*1000, low[0], low[1]), Rules: mustRules(tb, rules)}
	ip = rate.Limit{Scope: "ip", Key: keyIn(l, "ip", "10.0.%d", round*1000, high[0], high[1]), Rules: mustRules(tb, rules)}
	return phone, ip
}

func TestCluster(t *testing.T) {
	ctx := context.Background()
	cluster := testenv.RedisCluster(t)

	t.Run("SlotMatchesClusterKeySlot", func(t *testing.T) { testSlotMatchesRedis(t, cluster) })

	for _, phoneFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("AllOrNothingAcrossSlots/PhoneSlotFirst=%v", phoneFirst), func(t *testing.T) {
			rdb := cluster.Client()
			l := New(rdb, testenv.KeyPrefix(t))
			phone, ip := twoSlots(t, l, "1/1m", phoneFirst, 0)
			if slot(l.Key(phone.Scope, phone.Key)) == slot(l.Key(ip.Scope, ip.Key)) {
				t.Fatalf("phone and ip share a slot")
			}
			mustAllow(t, l, ip)
			d := mustAllow(t, l, phone, ip)
			if d.Allowed {
				t.Fatalf("got allowed, want denied by ip")
			}
			if got, want := count(t, l, rdb, phone), int64(0); got != want {
				t.Errorf("phone: got %d entries, want %d", got, want)
			}
			v := d.Violations()
			if len(v) != 1 || v[0].Scope != "ip" {
				t.Errorf("got violations %+v, want ip only", v)
			}
			if got := d.Rules[0]; got.Used != 0 || got.Remaining != 1 || got.Violated {
				t.Errorf("phone state: got %+v, want untouched", got)
			}
			if d := mustAllow(t, l, phone); !d.Allowed {
				t.Errorf("phone alone afterwards: got denied, want allowed")
			}
		})
	}

	t.Run("ReportsViolationsOfEverySlot", func(t *testing.T) {
		rdb := cluster.Client()
		l := New(rdb, testenv.KeyPrefix(t))
		phone, ip := twoSlots(t, l, "1/1m", true, 0)
		mustAllow(t, l, phone, ip)
		d := mustAllow(t, l, phone, ip)
		if got := len(d.Violations()); d.Allowed || got != 2 {
			t.Errorf("got allowed %v with %d violations, want denied with 2", d.Allowed, got)
		}
	})

	t.Run("RetryIsReplayed", func(t *testing.T) {
		rdb := cluster.Client()
		l := New(rdb, testenv.KeyPrefix(t))
		l.NewID = func() string { return "fixed-id-02" }
		phone, ip := twoSlots(t, l, "1/1m", true, 0)
		mustAllow(t, l, phone, ip)
		d := mustAllow(t, l, phone, ip)
		if !d.Allowed || !d.Replayed {
			t.Errorf("got allowed %v replayed %v, want true true", d.Allowed, d.Replayed)
		}
		if err := l.Refund(ctx, d.Reservation); err != nil {
			t.Fatalf("Refund: %v", err)
		}
		for _, lim := range []rate.Limit{phone, ip} {
			if got, want := count(t, l, rdb, lim), int64(0); got != want {
				t.Errorf("%s after refund: got %d entries, want %d", lim.Scope, got, want)
			}
		}
	})

	t.Run("FailedSlotUndoesTheSlotsBefore", func(t *testing.T) {
		rdb := redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: cluster.Addrs, ContextTimeoutEnabled: true,
			DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
		})
		t.Cleanup(func() { _ = rdb.Close() })
		l := New(rdb, testenv.KeyPrefix(t))
		phone, ip := twoSlots(t, l, "5/1m", true, 0)
		count(t, l, rdb, ip) // learns the slot map while every master answers
		// The IP's slot lies on the last master: paused, it lets the phone's slot record the
		// request first, then fails the call by the caller's deadline.
		last := redis.NewClient(&redis.Options{Addr: cluster.Addrs[2]})
		t.Cleanup(func() { _ = last.Close() })
		if err := last.Do(ctx, "CLIENT", "PAUSE", "500", "ALL").Err(); err != nil {
			t.Fatalf("CLIENT PAUSE: %v", err)
		}
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		got, err := l.Allow(short, []rate.Limit{phone, ip})
		wantUnavailable(t, got, err)
		if got, want := count(t, l, rdb, phone), int64(0); got != want {
			t.Errorf("phone: got %d entries, want %d", got, want)
		}
		if err := last.Ping(ctx).Err(); err != nil { // answers once the pause ends
			t.Fatalf("PING after the pause: %v", err)
		}
	})

	t.Run("ConcurrentAppServersNeverOverAdmit", func(t *testing.T) {
		prefix := testenv.KeyPrefix(t)
		var ls []*Limiter
		var rdb *redis.ClusterClient
		for range 3 {
			rdb = cluster.Client()
			ls = append(ls, New(rdb, prefix))
		}
		for round := range rounds {
			// Half the requests come for the phone from the IP, half for other phones from the
			// same IP; when the phone's slot comes first, a full IP makes Allow undo the phone.
			phone, ip := twoSlots(t, ls[0], "10/1m", round%2 == 0, round)
			allowed := race(t, ls, []rate.Limit{phone, ip}, []rate.Limit{ip})
			both, total := allowed[0], allowed[0]+allowed[1]
			t.Logf("round %d: %d allowed for the phone, %d for the IP", round, both, total)
			if total > 10 || total < 1 {
				t.Errorf("round %d: got %d allowed, want 1 to 10", round, total)
			}
			if got := count(t, ls[0], rdb, phone); got != both {
				t.Errorf("round %d: got %d phone entries, want %d (one per allowed request)", round, got, both)
			}
			if got := count(t, ls[0], rdb, ip); got != total {
				t.Errorf("round %d: got %d ip entries, want %d (one per allowed request)", round, got, total)
			}
		}
	})
}

// testSlotMatchesRedis compares slot with CLUSTER KEYSLOT.
func testSlotMatchesRedis(t *testing.T, cluster *testenv.Cluster) {
	ctx := context.Background()
	rdb := cluster.Client()
	l := New(rdb, "otp:")
	keys := []string{
		"", "a", "foo", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}",
		"{}", "}{", "{a", "a}", "x{ä}y",
		l.Key("phone", "+819012345678"), l.Key("ip", "2001:db8::/64"), l.Key("dup", "+1|{fp}"),
	}
	for i := range 200 {
		keys = append(keys, l.Key("phone", fmt.Sprintf("+8190%08d", i)))
	}
	for _, k := range keys {
		want, err := rdb.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatalf("CLUSTER KEYSLOT %q: %v", k, err)
		}
		if got := slot(k); int64(got) != want {
			t.Errorf("slot(%q): got %d, want %d", k, got, want)
		}
	}
}
