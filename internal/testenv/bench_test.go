package testenv_test

import (
	"testing"

	"otpgate/internal/testenv"
)

func BenchmarkPostgresDSN(b *testing.B) {
	for b.Loop() {
		testenv.PostgresDSN(b)
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
