package reference

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// What a request costs the reference in Redis, PostgreSQL and the provider.

// allow runs the limiter script once over the policy's keys, laid out as otpgate's limiter
// lays it out, and returns its status and the longest retry-after in whole seconds.
func (s *refServer) allow(ctx context.Context, policy []refKey) (status, retry int64, err error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	// Mode, request id, the server's clock, then the guard's settings when it has keys.
	args := make([]any, 0, 64)
	args = append(args, "allow", base64.RawURLEncoding.EncodeToString(b[:]), "")
	guarded := false
	for _, k := range policy {
		guarded = guarded || k.guard != nil
	}
	if guarded {
		c := s.fraud
		args = append(args, "13", refMillis(c.ShortHorizon), refMillis(c.LongHorizon), refFloat(c.Ratio), refFloat(c.PriorRate),
			refFloat(c.PriorWeight), refMillis(c.Block), "", "", refFloat(c.Surge), 0, c.BlockPass, c.CountriesPerNetwork, c.YoungApprovals)
	} else {
		args = append(args, 0)
	}
	keys := make([]string, len(policy))
	for i, k := range policy {
		keys[i] = s.prefix + "{" + k.key + "}"
		if g := k.guard; g != nil {
			keys[i] += ":g"
			args = append(args, "g", "e", g.floor, g.volumeFloor, g.volumeRatio, g.country, g.role)
			continue
		}
		largest := 0
		for _, r := range k.rules {
			largest = max(largest, r.limit)
		}
		args = append(args, len(k.rules), "-"+strconv.Itoa(min(largest, 100)+1))
		for _, r := range k.rules {
			args = append(args, r.limit, r.window.Milliseconds())
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	reply, err := s.script.Run(ctx, s.rdb, keys, args...).Int64Slice()
	if err != nil {
		return 0, 0, err
	}
	if len(reply) < 2 {
		return 0, 0, errors.New("short reply")
	}
	// status, now, then used, reset and retry per rule, and 11 fields per guard.
	n := 2
	for _, k := range policy {
		if k.guard != nil {
			retry = max(retry, (reply[n+1]+999_999)/1_000_000)
			n += 11
			continue
		}
		for range k.rules {
			retry = max(retry, (reply[n+2]+999_999)/1_000_000)
			n += 3
		}
	}
	return reply[0], retry, nil
}

// approve counts an approval for the guard hashes of a send to phone from sentIP, weighed as
// otpgate weighs it: less when it came faster than a person reads, or from another network.
func (s *refServer) approve(ctx context.Context, phone, sentIP, checkIP string, sentAt time.Time) error {
	weight := 1.0
	if time.Since(sentAt) < time.Duration(s.fraud.MinApprovalDelay) {
		weight *= s.fraud.FastApprovalWeight
	}
	if refNetwork(checkIP) != refNetwork(sentIP) {
		weight *= s.fraud.ForeignApprovalWeight
	}
	var keys []string
	args := []any{"approve", "", refFloat(weight), s.fraud.YoungApprovals}
	for _, k := range s.guardKeys(phone, sentIP) {
		keys = append(keys, s.prefix+"{"+k.key+"}:g")
		args = append(args, k.guard.role)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.guard.Run(ctx, s.rdb, keys, args...).Err()
}

// deliver POSTs the message to the webhook provider, signed as otpgate signs it.
func (s *refServer) deliver(ctx context.Context, id, to, code string, now time.Time) error {
	body, _ := json.Marshal(map[string]string{
		"id": id, "to": to, "body": "Your verification code is " + code + ".", "locale": "en",
		"created_at": now.Format(time.RFC3339),
	})
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.provider, bytes.NewReader(body))
	if err != nil {
		return err
	}
	t := strconv.FormatInt(now.Unix(), 10)
	mac := hmac.New(sha256.New, s.secret)
	mac.Write([]byte(t + "." + string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Otpgate-Signature", "t="+t+",v1="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := s.sms.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("provider answered %d", resp.StatusCode)
	}
	return nil
}

// hash is the code's HMAC, tied to the verification id.
func (s *refServer) hash(id, code string) []byte { return s.hashWith(s.secret, id+code) }

// hashWith is the HMAC-SHA256 of text under key.
func (s *refServer) hashWith(key []byte, text string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(text))
	return mac.Sum(nil)
}

// refCode is six random digits.
func refCode() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	n := uint64(0)
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return fmt.Sprintf("%06d", n%1_000_000)
}

// refClientIP is the last X-Forwarded-For entry, else the peer.
func refClientIP(r *http.Request) string {
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		parts := strings.Split(xff[len(xff)-1], ",")
		return strings.TrimSpace(parts[len(parts)-1])
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	return host
}

func refJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
