package servertest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"testing"
)

// PhoneFor returns a valid Japanese mobile number unique to this run: n picks it.
func PhoneFor(n int) string {
	return fmt.Sprintf("+8190%d%07d", 1+rand.IntN(9), n%10_000_000)
}

// NewPhone returns a fresh number, as PhoneFor does with a random n.
func NewPhone() string { return PhoneFor(rand.IntN(10_000_000)) }

// PrefixPhone returns the n-th number of a prefix that NewPrefix made: numbers differing
// only in their last four digits share the fraud guard's prefix.
func PrefixPhone(prefix string, n int) string { return fmt.Sprintf("%s%04d", prefix, n) }

// fraudPrefixes hands out distinct prefixes, from a random start so that runs differ.
var fraudPrefixes atomic.Int64

func init() { fraudPrefixes.Store(rand.Int64N(8000)) }

// NewPrefix returns a fresh prefix of Japanese mobile numbers, such as "+81901234".
func NewPrefix() string { return fmt.Sprintf("+8190%04d", 1000+fraudPrefixes.Add(1)%9000) }

// From makes the request come from ip: the test servers trust the loopback proxy.
func From(ip string) []string { return []string{"X-Forwarded-For", ip} }

// FreeAddr is a loopback address no one listens on right now, for a server whose public
// URL must be known before it starts.
func FreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
