package main

// The reference server: the least a server of otpgate's architecture has to do for each
// scenario, in loadgen's own code. It shares only the limiter's Lua scripts with otpgate, so
// the load report can tell what otpgate itself costs from what the architecture costs:
//
//	send    one EVALSHA of the script for the send policy with the fraud guard of the
//	        default configuration: the same 7 keys as otpgate's (duplicate, phone and IP logs
//	        with 5 rules; the guard hashes of the number's country and prefix, the client's
//	        network and the young countries' pool) and the same settings, the number's keys
//	        named by its keyed hash (HMAC-SHA256), as otpgate names them; when denied, nothing
//	        more than a 429; when allowed, one autocommit INSERT, one loopback POST to the
//	        SMS provider, then 201
//	check   one EVALSHA for the check policy and one autocommit UPDATE … RETURNING; a right
//	        code then counts the approval for the send's guard hashes (one EVALSHA of the
//	        guard's script, weighed as otpgate weighs it)
//
// It is built like otpgate (net/http, go-redis with the same timeouts, a pgx pool of the same
// size) but keeps no history, normalises no phone numbers (the country is read from the
// calling code) and writes no outcome.

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
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"otpgate/internal/fraud"
	"otpgate/lua"
)

// referenceRoleVar set to referenceRole makes the loadgen binary run as the reference server.
const (
	referenceRoleVar = "OTPGATE_LOADGEN_ROLE"
	referenceRole    = "reference"
)

// refServer is the reference's state.
type refServer struct {
	rdb    *redis.Client
	pool   *pgxpool.Pool
	script *redis.Script
	guard  *redis.Script
	fraud  fraud.Config
	prefix string
	secret []byte
	// index keys the hash that names a number in the limiter's keys.
	index    []byte
	provider string
	sms      *http.Client
	timeout  time.Duration
}

// serveReference runs the reference server until ctx ends. It prints otpgate's
// "listening" line, so the same fixture starts both.
func serveReference(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	opts, err := redis.ParseURL(getenv("REDIS_URL"))
	if err != nil {
		return fmt.Errorf("reference: REDIS_URL: %w", err)
	}
	const timeout = 200 * time.Millisecond // otpgate's OTP_REDIS_TIMEOUT default
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.ContextTimeoutEnabled = time.Second, timeout, timeout, true
	opts.Protocol = 2 // as otpgate speaks to Redis by default
	rdb := redis.NewClient(opts)
	defer rdb.Close()

	cfg, err := pgxpool.ParseConfig(getenv("DATABASE_URL"))
	if err != nil {
		return fmt.Errorf("reference: DATABASE_URL: %w", err)
	}
	cfg.MaxConns = 20 // otpgate's default pool
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("reference: postgres: %w", err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS loadgen_reference (
			id uuid PRIMARY KEY, phone text NOT NULL, ip text NOT NULL, code_hash bytea NOT NULL,
			attempts integer NOT NULL DEFAULT 0, approved boolean NOT NULL DEFAULT false,
			created_at timestamptz NOT NULL);
		CREATE INDEX IF NOT EXISTS loadgen_reference_phone_idx ON loadgen_reference (phone, created_at)`); err != nil {
		return fmt.Errorf("reference: create table: %w", err)
	}

	s := &refServer{
		rdb: rdb, pool: pool, script: redis.NewScript(lua.SlidingLog), guard: redis.NewScript(lua.Guard),
		fraud:  fraud.Defaults(),
		prefix: getenv("OTP_REDIS_PREFIX"), secret: []byte(getenv("OTP_SECRET")),
		provider: getenv("SMS_WEBHOOK_URL"), timeout: timeout,
		sms: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 100, IdleConnTimeout: 90 * time.Second}},
	}
	s.index = s.hashWith(s.secret, "loadgen reference index")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/verifications", s.send)
	mux.HandleFunc("POST /v1/verifications/check", s.check)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	// For loadgen -profile, which compares otpgate's profile with this one.
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)

	ln, err := net.Listen("tcp", getenv("OTP_HTTP_ADDR"))
	if err != nil {
		return fmt.Errorf("reference: listen: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	fmt.Fprintf(stdout, "reference listening: api http://%s admin http://%s/admin/\n", ln.Addr(), ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// send is the least an allowed or denied send needs.
func (s *refServer) send(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Phone string `json:"phone"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<10)).Decode(&in); err != nil || in.Phone == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	ip := refClientIP(r)
	ctx := r.Context()
	status, retry, err := s.allow(ctx, s.sendPolicy(in.Phone, ip))
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if status == 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(retry, 10))
		refJSON(w, http.StatusTooManyRequests, map[string]any{"code": "rate_limited", "retry_after_seconds": retry})
		return
	}
	id := uuid.Must(uuid.NewV7()).String()
	code := refCode()
	now := time.Now().UTC()
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = s.pool.Exec(dctx, `INSERT INTO loadgen_reference (id, phone, ip, code_hash, created_at) VALUES ($1, $2, $3, $4, $5)`,
		id, in.Phone, ip, s.hash(id, code), now)
	cancel()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if err := s.deliver(context.WithoutCancel(ctx), id, in.Phone, code, now); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	refJSON(w, http.StatusCreated, map[string]any{"id": id, "phone": in.Phone, "status": "pending"})
}

// check is the least a guess within the budget needs: a wrong one answers 422, a right one
// approves and counts the approval for the send's guard hashes.
func (s *refServer) check(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ID   string `json:"id"`
		Code string `json:"code"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<10)).Decode(&in); err != nil || uuid.Validate(in.ID) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	ip := refClientIP(r)
	status, retry, err := s.allow(ctx, []refKey{{key: "check_id:" + in.ID, rules: refCheck}, {key: "check_ip:" + ip, rules: refCheck}})
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if status == 0 {
		refJSON(w, http.StatusTooManyRequests, map[string]any{"code": "rate_limited", "retry_after_seconds": retry})
		return
	}
	var (
		approved      bool
		attempts      int
		phone, sentIP string
		sentAt        time.Time
	)
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	err = s.pool.QueryRow(dctx, `UPDATE loadgen_reference SET attempts = attempts + 1, approved = approved OR code_hash = $2
		WHERE id = $1 AND NOT approved RETURNING approved, attempts, phone, ip, created_at`, in.ID, s.hash(in.ID, in.Code)).Scan(&approved, &attempts, &phone, &sentIP, &sentAt)
	cancel()
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if !approved {
		refJSON(w, http.StatusUnprocessableEntity, map[string]any{"code": "invalid_code", "attempts_left": 1_000_000 - attempts})
		return
	}
	if err := s.approve(ctx, phone, sentIP, ip, sentAt); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	refJSON(w, http.StatusOK, map[string]any{"id": in.ID, "status": "approved"})
}

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
