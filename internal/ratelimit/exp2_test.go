package ratelimit

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestExp2(t *testing.T) {
	if os.Getenv("EXP") == "" {
		t.Skip()
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6399"})
	scripts := map[string]string{
		"return1":    "return 1",
		"time":       "local t = redis.call('TIME') return 1",
		"10exists":   "for i=1,10 do redis.call('EXISTS', KEYS[1]) end return 1",
		"zrange3":    "for i=1,3 do redis.call('ZRANGE', KEYS[i], -11, -1, 'WITHSCORES') end return 1",
		"zadd3":      "for i=1,3 do redis.call('ZADD', KEYS[i], 1, ARGV[1]) redis.call('PEXPIRE', KEYS[i], 100000) end return 1",
		"tables":     "local t = {} for i=1,3 do t[i] = {name=KEYS[i], rules={}, x=0} t[i].rules[1]={1,2} t[i].rules[2]={3,4} end local r = {} for i=1,16 do r[i]=i end return r",
	}
	for name, src := range scripts {
		s := redis.NewScript(src)
		rdb.FlushAll(ctx)
		rdb.ZAdd(ctx, "a", redis.Z{Score: 1700000000000000, Member: "aaaaaaaaaaa"})
		rdb.ZAdd(ctx, "b", redis.Z{Score: 1700000000000000, Member: "aaaaaaaaaaa"})
		rdb.ZAdd(ctx, "c", redis.Z{Score: 1700000000000000, Member: "aaaaaaaaaaa"})
		s.Run(ctx, rdb, []string{"a", "b", "c"}, "xxxxxxxxxxx", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18)
		rdb.ConfigResetStat(ctx)
		for range 5000 {
			if err := s.Run(ctx, rdb, []string{"a", "b", "c"}, "xxxxxxxxxxx", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for _, line := range strings.Split(rdb.Info(ctx, "commandstats").Val(), "\r\n") {
			if strings.Contains(line, "evalsha") {
				t.Log(name, line)
			}
		}
	}
}
