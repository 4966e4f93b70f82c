package ratelimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"otpgate/lua"
)

func usecPerCall(rdb *redis.Client) float64 {
	s := evalStat(nil, rdb)
	i := strings.Index(s, "usec_per_call=")
	v := s[i+len("usec_per_call="):]
	v = v[:strings.Index(v, ",")]
	f, _ := strconv.ParseFloat(v, 64)
	return f
}

// cut returns the script with an early return inserted before the marker.
func cut(marker string) string {
	i := strings.Index(lua.SlidingLog, marker)
	if i < 0 {
		panic(marker)
	}
	return lua.SlidingLog[:i] + "do return {1} end\n" + lua.SlidingLog[i:]
}

func TestExp4(t *testing.T) {
	if os.Getenv("EXP") == "" {
		t.Skip()
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6399"})
	variants := map[string]string{
		"full":      lua.SlidingLog,
		"afterTIME": cut("-- The script runs on every request"),
		"afterLoad": cut("-- count returns"),
		"afterDecide": cut("  for i = 1, #KEYS do\n    local key, raw = KEYS[i], z[i]"),
		"afterRecord": cut("local reply, n = {status}, 1"),
	}
	for _, extra := range []string{"", "x"} {
		_ = extra
	}
	best := map[string]float64{}
	r := rand.New(rand.NewPCG(1, 2))
	for rep := 0; rep < 8; rep++ {
		for name, src := range variants {
			l := New(rdb, "b:")
			l.script = redis.NewScript(src)
			rdb.FlushAll(ctx)
			for range 200 {
				l.Allow(ctx, sendPolicy(r))
			}
			rdb.ConfigResetStat(ctx)
			for range 3000 {
				l.Allow(ctx, sendPolicy(r))
			}
			u := usecPerCall(rdb)
			if b, ok := best[name]; !ok || u < b {
				best[name] = u
			}
		}
	}
	for name, u := range best {
		fmt.Println(name, u)
	}
}
