// Package reference is loadgen's reference server: the least a server of otpgate's architecture has to do for each
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
package reference

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"otpgate/internal/fraud"
	"otpgate/lua"
)

// RoleVar set to Role makes the loadgen binary run as the reference server.
const (
	RoleVar = "OTPGATE_LOADGEN_ROLE"
	Role    = "reference"
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

// Serve runs the reference server until ctx ends. It prints otpgate's
// "listening" line, so the same fixture starts both.
func Serve(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
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
