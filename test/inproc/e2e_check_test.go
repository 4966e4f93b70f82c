package inproc

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/server/servertest"
)

func TestConcurrentChecks(t *testing.T) {
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{"OTP_LIMIT_CHECK_PHONE": "10000/1h", "OTP_LIMIT_CHECK_IP": "10000/1h", "OTP_LIMIT_IP": "100/1m"})
	ins := []*servertest.Instance{servertest.Start(t, env), servertest.Start(t, env)}

	t.Run("WrongGuessesNeverExceedBudget", func(t *testing.T) {
		phone := servertest.NewPhone()
		r := servertest.Send(t, ins[0], phone)
		servertest.WantStatus(t, r, http.StatusCreated, "")
		code := servertest.LastCode(t, p, phone)
		wrong := fmt.Sprintf("%06d", (mustAtoi(t, code)+1)%1_000_000)
		counts := concurrently(200, func(i int) int {
			return servertest.Check(t, ins[i%2], map[string]string{"id": r.Str("id"), "code": wrong}).Status
		})
		if counts[422] != 5 || counts[429] != 195 {
			t.Errorf("got %v, want exactly 5 × 422 and 195 × 429", counts)
		}
		if n := countRows(t, env["DATABASE_URL"], `SELECT count(*) FROM attempts WHERE verification_id = $1 AND outcome = 'invalid_code'`, r.Str("id")); n != 5 {
			t.Errorf("got %d invalid_code attempts recorded, want 5", n)
		}
	})
	t.Run("RightCodeApprovesExactlyOnce", func(t *testing.T) {
		phone := servertest.NewPhone()
		r := servertest.Send(t, ins[0], phone)
		servertest.WantStatus(t, r, http.StatusCreated, "")
		code := servertest.LastCode(t, p, phone)
		counts := concurrently(50, func(i int) int {
			return servertest.Check(t, ins[i%2], map[string]string{"phone": phone, "code": code}).Status
		})
		if counts[200] != 1 || counts[404] != 49 {
			t.Errorf("got %v, want exactly one 200 and 49 × 404", counts)
		}
	})
}

func TestCheckErrors(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{"OTP_CODE_TTL": "1s", "OTP_LIMIT_CHECK_IP": "4/1h", "OTP_LIMIT_CHECK_PHONE": "100/1h"}))
	phone := servertest.NewPhone()
	servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
	code := servertest.LastCode(t, p, phone)

	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": servertest.NewPhone(), "code": "123456"}), http.StatusNotFound, "not_found")
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"id": "0190b5e4-6f7c-7b3a-9d4e-2c1f0a9b8c7d", "code": "123456"}), http.StatusNotFound, "not_found")
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": "12"}), http.StatusBadRequest, "invalid_request")
	time.Sleep(1100 * time.Millisecond)
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": code}), http.StatusGone, "expired")
	// Three checks above reached the limiter (the malformed one did not); the IP has one left.
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": code}), http.StatusGone, "expired")
	r := servertest.Check(t, in, map[string]string{"phone": phone, "code": code})
	servertest.WantStatus(t, r, http.StatusTooManyRequests, "rate_limited")
	if r.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After on a rate-limited check")
	}
}

func TestDevModeWalkthrough(t *testing.T) {
	in := servertest.Start(t, map[string]string{})
	if len(in.Stdout.Lines("DEV MODE")) == 0 {
		t.Errorf("no DEV MODE banner in %q", in.Stdout.String())
	}
	phone := "+819012345678"
	r := servertest.Send(t, in, phone)
	servertest.WantStatus(t, r, http.StatusCreated, "")
	// No locale named: the Japanese number's message is in Japanese (README's walkthrough).
	re := regexp.MustCompile(`認証コード: (\d{6})`)
	var code string
	for _, l := range in.Stderr.Lines(phone) {
		if m := re.FindStringSubmatch(l); m != nil {
			code = m[1]
		}
	}
	if code == "" {
		t.Fatalf("no code in the dev log:\n%s", in.Stderr.String())
	}
	servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusConflict, "duplicate_submit")
	servertest.WantStatus(t, servertest.Send(t, in, phone, "User-Agent", "second-client"), http.StatusTooManyRequests, "rate_limited")
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": code}), http.StatusOK, "")
}

// concurrently runs n calls of f at once and counts the statuses they return.
func concurrently(n int, f func(i int) int) map[int]int {
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s := f(i)
			mu.Lock()
			counts[s]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return counts
}

func countRows(t testing.TB, dsn, query string, args ...any) int {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
