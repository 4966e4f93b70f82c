package reference

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"otpgate/internal/fraud"
)

// refRule is one sliding-window rule of the reference's policies.
type refRule struct {
	limit  int
	window time.Duration
}

// The policies both servers run with: loadgen configures otpgate with the same rules
// (serverEnv), so the two decide the same policies.
var (
	refDuplicate = []refRule{{1, 5 * time.Second}}
	refPerKey    = []refRule{{1, time.Minute}, {10, time.Hour}}
	refCheck     = []refRule{{1_000_000, time.Hour}}
)

// PolicyEnv is otpgate's configuration of the reference's policy: the duplicate window,
// the send limits per number and per client, and the check limits (the check scenario
// guesses wrong within the budget for as long as it runs).
func PolicyEnv() map[string]string {
	return map[string]string{
		"OTP_DUPLICATE_WINDOW": windowEnv(refDuplicate[0].window),
		"OTP_LIMIT_PHONE":      rulesEnv(refPerKey), "OTP_LIMIT_IP": rulesEnv(refPerKey),
		"OTP_MAX_ATTEMPTS": "1000000", "OTP_LIMIT_CHECK_PHONE": rulesEnv(refCheck), "OTP_LIMIT_CHECK_IP": rulesEnv(refCheck),
	}
}

// rulesEnv renders rules as otpgate's configuration reads them, such as "1/1m,10/1h".
func rulesEnv(rules []refRule) string {
	var parts []string
	for _, r := range rules {
		parts = append(parts, fmt.Sprintf("%d/%s", r.limit, windowEnv(r.window)))
	}
	return strings.Join(parts, ",")
}

// windowEnv renders a window in its largest whole unit, such as "1h" or "5s".
func windowEnv(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// refKey is one key of a reference policy: a sliding log with its rules, or a guard hash.
type refKey struct {
	key   string
	rules []refRule
	guard *refGuard
}

// refGuard is a guard hash's settings, as the script reads them.
type refGuard struct {
	floor, volumeFloor int
	volumeRatio        string
	country, role      string
}

// sendPolicy is the send policy of otpgate's default configuration: the duplicate, phone and
// IP logs, the phone's named by its keyed hash, then the guard hashes.
func (s *refServer) sendPolicy(phone, ip string) []refKey {
	h := "i." + base64.RawURLEncoding.EncodeToString(s.hashWith(s.index, phone)[:18])
	return append([]refKey{
		{key: "duplicate:" + h + "|" + ip, rules: refDuplicate},
		{key: "phone:" + h, rules: refPerKey},
		{key: "ip:" + ip, rules: refPerKey},
	}, s.guardKeys(phone, ip)...)
}

// guardKeys are the guard hashes of a send, with the default configuration's settings: the
// number's country and prefix, the client's network and the young countries' pool.
func (s *refServer) guardKeys(phone, ip string) []refKey {
	c := s.fraud
	region := refRegion(phone)
	return []refKey{
		{key: "country:" + region, guard: &refGuard{floor: c.FloorCountry, volumeFloor: c.VolumeFloor, volumeRatio: refFloat(c.Ratio), role: "c"}},
		{key: "prefix:" + phone[:len(phone)-c.PrefixDrop], guard: &refGuard{floor: c.FloorPrefix, volumeFloor: c.VolumeFloor, volumeRatio: "-1"}},
		{key: "ip_net:" + refNetwork(ip), guard: &refGuard{floor: c.FloorIPNet, volumeFloor: c.VolumeFloor, volumeRatio: "0.5", country: region}},
		{key: "young_countries:all", guard: &refGuard{floor: c.FloorYoungCountries, volumeRatio: "0", role: "y"}},
	}
}

// refRegion is the country of a number of loadgen's shape, by its calling code.
func refRegion(phone string) string {
	for _, c := range []struct{ code, region string }{{"+1", "US"}, {"+33", "FR"}, {"+44", "GB"}, {"+49", "DE"}, {"+81", "JP"}} {
		if strings.HasPrefix(phone, c.code) {
			return c.region
		}
	}
	return "ZZ"
}

// refNetwork is an IPv4 client's /24.
func refNetwork(ip string) string {
	if i := strings.LastIndexByte(ip, '.'); i > 0 {
		return ip[:i] + ".0/24"
	}
	return ip
}

// refMillis is a span in whole milliseconds, as the script reads it.
func refMillis(d fraud.Span) string { return strconv.FormatInt(time.Duration(d).Milliseconds(), 10) }

// refFloat is a setting as the script reads it on every Redis: plain decimal, as the limiter writes it.
func refFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
