package testenv_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"otpgate/internal/testenv"
)

func BenchmarkPostgresDSN(b *testing.B) {
	for b.Loop() {
		testenv.PostgresDSN(b)
	}
}

// BenchmarkCreateDatabase compares the strategies PostgresDSN could use, create and drop.
func BenchmarkCreateDatabase(b *testing.B) {
	u, err := url.Parse(testenv.PostgresDSN(b))
	if err != nil {
		b.Fatal(err)
	}
	u.Path = "/postgres"
	admin := connectB(b, u.String())
	ctx := context.Background()
	for _, strategy := range []string{"WAL_LOG", "FILE_COPY"} {
		b.Run(strategy, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				name := fmt.Sprintf("otpgate_bench_%d", i)
				if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 STRATEGY "+strategy); err != nil {
					b.Fatal(err)
				}
				if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkStartRedis(b *testing.B) {
	for b.Loop() {
		testenv.StartRedis(b).Stop()
	}
}

func BenchmarkRedisCluster(b *testing.B) {
	for b.Loop() {
		c := testenv.RedisCluster(b)
		for i := range c.Addrs {
			c.Stop(i)
		}
	}
}

func BenchmarkStartPostgres(b *testing.B) {
	for b.Loop() {
		testenv.StartPostgres(b).Stop()
	}
}
