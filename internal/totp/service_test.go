package totp_test

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	pqotp "github.com/pquerna/otp"
	pqtotp "github.com/pquerna/otp/totp"

	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/ratelimit"
	"otpgate/internal/testenv"
	"otpgate/internal/totp"
)

// env is a service over a real store and the real limiter on Redis, with a clock the
// test moves.
type env struct {
	svc *totp.Service
	mu  sync.Mutex
	now time.Time
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

// eachStore runs f once over the dev store and once over PostgreSQL.
func eachStore(t *testing.T, f func(t *testing.T, e *env, sql func(query string, args ...any) string)) {
	storesOf(t, []string{"inmem", "postgres"}, f)
}

// storesOf runs f over the named stores; sql queries PostgreSQL for one string.
func storesOf(t *testing.T, names []string, f func(t *testing.T, e *env, sql func(query string, args ...any) string)) {
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			rdb, prefix := testenv.Redis(t)
			sealer, err := totp.NewSealer([]byte("test secret"))
			if err != nil {
				t.Fatal(err)
			}
			var store totp.Store = inmem.New()
			sql := func(string, ...any) string { t.Fatal("no database"); return "" }
			if name == "postgres" {
				ctx := context.Background()
				pool, err := postgres.Open(ctx, testenv.PostgresDSN(t))
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				t.Cleanup(pool.Close)
				if err := postgres.Migrate(ctx, pool); err != nil {
					t.Fatalf("Migrate: %v", err)
				}
				store = postgres.New(pool, testenv.DataKeys())
				sql = func(query string, args ...any) string {
					var out string
					if err := pool.QueryRow(ctx, query, args...).Scan(&out); err != nil {
						t.Fatalf("%s: %v", query, err)
					}
					return out
				}
			}
			e := &env{now: time.Date(2030, 3, 4, 5, 0, 10, 0, time.UTC)}
			e.svc = totp.NewService(store, ratelimit.New(rdb, prefix), sealer, func() string { return uuid.Must(uuid.NewV7()).String() })
			e.svc.Now = e.clock
			f(t, e, sql)
		})
	}
}

var app = otp.App{ID: "01900000-0000-7000-8000-000000000001", Name: "Acme"}

// independentCode makes the code of uri at now with pquerna/otp, an implementation
// otpgate's code shares nothing with.
func independentCode(t *testing.T, uri string, now time.Time) string {
	t.Helper()
	key, err := pqotp.NewKeyFromURL(uri)
	if err != nil {
		t.Fatalf("pquerna/otp reads %s: %v", uri, err)
	}
	alg := map[string]pqotp.Algorithm{"SHA1": pqotp.AlgorithmSHA1, "SHA256": pqotp.AlgorithmSHA256, "SHA512": pqotp.AlgorithmSHA512}[key.Algorithm().String()]
	code, err := pqtotp.GenerateCodeCustom(key.Secret(), now, pqtotp.ValidateOpts{
		Period: uint(key.Period()), Digits: key.Digits(), Algorithm: alg})
	if err != nil {
		t.Fatalf("pquerna/otp: %v", err)
	}
	return code
}

func TestAFactorEnrolsAndAnswersChallengesOnceACode(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env, _ func(string, ...any) string) {
		ctx := t.Context()
		for _, cfg := range []totp.Config{totp.DefaultConfig(), {Alg: totp.SHA512, Digits: 8, Period: 60, Skew: 0}} {
			identity := "user-" + uuid.NewString()[:8]
			en, err := e.svc.CreateFactor(ctx, app, totp.NewFactor{Identity: identity, FriendlyName: "Ana's phone", Config: cfg})
			if err != nil {
				t.Fatalf("CreateFactor: %v", err)
			}
			if en.Factor.Status != totp.FactorUnverified || !strings.HasPrefix(en.URI, "otpauth://totp/Acme:") || len(en.Secret) != 32 {
				t.Fatalf("got %+v, want an unverified factor with a 160-bit secret and a URI issued by Acme", en)
			}
			fid := en.Factor.ID
			if _, err := e.svc.CreateChallenge(ctx, app.ID, identity, fid, "123456"); !errors.Is(err, totp.ErrUnverified) {
				t.Errorf("challenge of an unverified factor: got %v, want ErrUnverified", err)
			}
			code := independentCode(t, en.URI, e.clock())
			f, ok, err := e.svc.VerifyFactor(ctx, app.ID, identity, fid, code)
			if err != nil || !ok || f.Status != totp.FactorVerified {
				t.Fatalf("VerifyFactor with pquerna/otp's code: got %+v %v %v, want verified", f, ok, err)
			}
			// The code that verified the factor does not approve a challenge.
			c, err := e.svc.CreateChallenge(ctx, app.ID, identity, fid, code)
			if err != nil || c.Status != totp.ChallengeDenied {
				t.Errorf("replayed code: got %+v %v, want denied", c, err)
			}
			e.advance(time.Duration(cfg.Period) * time.Second)
			next := independentCode(t, en.URI, e.clock())
			c, err = e.svc.CreateChallenge(ctx, app.ID, identity, fid, next)
			if err != nil || c.Status != totp.ChallengeApproved || c.FactorID != fid || c.Identity != identity {
				t.Errorf("next step's code: got %+v %v, want approved", c, err)
			}
			if c, err := e.svc.CreateChallenge(ctx, app.ID, identity, fid, next); err != nil || c.Status != totp.ChallengeDenied {
				t.Errorf("the same code twice: got %+v %v, want denied", c, err)
			}
			list, err := e.svc.Challenges(ctx, app.ID, identity, fid, totp.ChallengeApproved)
			if err != nil || len(list) != 1 {
				t.Errorf("approved challenges: got %+v %v, want one", list, err)
			}
		}
	})
}

func TestConcurrentUsesOfOneCodeApproveOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env, _ func(string, ...any) string) {
		ctx := t.Context()
		en, err := e.svc.CreateFactor(ctx, app, totp.NewFactor{Identity: "user-0001", FriendlyName: "phone", Config: totp.DefaultConfig()})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := e.svc.VerifyFactor(ctx, app.ID, "user-0001", en.Factor.ID, independentCode(t, en.URI, e.clock())); !ok || err != nil {
			t.Fatalf("VerifyFactor: %v %v", ok, err)
		}
		e.advance(30 * time.Second)
		code := independentCode(t, en.URI, e.clock())
		var mu sync.Mutex
		approved := 0
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				c, err := e.svc.CreateChallenge(ctx, app.ID, "user-0001", en.Factor.ID, code)
				if err != nil {
					t.Errorf("CreateChallenge: %v", err)
				}
				mu.Lock()
				defer mu.Unlock()
				if c.Status == totp.ChallengeApproved {
					approved++
				}
			})
		}
		wg.Wait()
		if approved != 1 {
			t.Errorf("4 concurrent challenges with one code: got %d approved, want 1", approved)
		}
	})
}

func TestWrongGuessesAreLimitedPerFactor(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env, _ func(string, ...any) string) {
		ctx := t.Context()
		en, err := e.svc.CreateFactor(ctx, app, totp.NewFactor{Identity: "user-0001", FriendlyName: "phone", Config: totp.DefaultConfig()})
		if err != nil {
			t.Fatal(err)
		}
		other, err := e.svc.CreateFactor(ctx, app, totp.NewFactor{Identity: "user-0001", FriendlyName: "tablet", Config: totp.DefaultConfig()})
		if err != nil {
			t.Fatal(err)
		}
		// A right code gives its reservation back: it leaves all five guesses.
		if _, ok, err := e.svc.VerifyFactor(ctx, app.ID, "user-0001", en.Factor.ID, independentCode(t, en.URI, e.clock())); !ok || err != nil {
			t.Fatalf("VerifyFactor: %v %v", ok, err)
		}
		wrong := "000000"
		if wrong == independentCode(t, en.URI, e.clock()) {
			wrong = "000001"
		}
		for i := range 5 {
			if c, err := e.svc.CreateChallenge(ctx, app.ID, "user-0001", en.Factor.ID, wrong); err != nil || c.Status != totp.ChallengeDenied {
				t.Fatalf("wrong guess %d: got %+v %v, want denied", i+1, c, err)
			}
		}
		_, err = e.svc.CreateChallenge(ctx, app.ID, "user-0001", en.Factor.ID, independentCode(t, en.URI, e.clock().Add(30*time.Second)))
		var limited *otp.ErrRateLimited
		if !errors.As(err, &limited) || limited.Violations()[0].Scope != totp.ScopeFactor {
			t.Fatalf("sixth guess within a minute: got %v, want rate limited on %s", err, totp.ScopeFactor)
		}
		if list, _ := e.svc.Challenges(ctx, app.ID, "user-0001", en.Factor.ID, ""); len(list) != 5 {
			t.Errorf("got %d challenges, want the 5 decided (a refused guess makes none)", len(list))
		}
		// Another factor has its own budget.
		if _, _, err := e.svc.VerifyFactor(ctx, app.ID, "user-0001", other.Factor.ID, wrong); err != nil {
			t.Errorf("another factor: got %v, want its own budget", err)
		}
	})
}

func TestBadInputChangesNothing(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env, _ func(string, ...any) string) {
		ctx := t.Context()
		for _, c := range []struct {
			n     totp.NewFactor
			field string
		}{
			{totp.NewFactor{Identity: "short", FriendlyName: "phone", Config: totp.DefaultConfig()}, "identity"},
			{totp.NewFactor{Identity: "+819012345678", FriendlyName: "phone", Config: totp.DefaultConfig()}, "identity"},
			{totp.NewFactor{Identity: "user-0001", FriendlyName: "", Config: totp.DefaultConfig()}, "friendly_name"},
			{totp.NewFactor{Identity: "user-0001", FriendlyName: "a\x00b", Config: totp.DefaultConfig()}, "friendly_name"},
			{totp.NewFactor{Identity: "user-0001", FriendlyName: "Ana\u202egnp.exe", Config: totp.DefaultConfig()}, "friendly_name"},
			{totp.NewFactor{Identity: "user-0001", FriendlyName: "Ana\u2066phone\u2069", Config: totp.DefaultConfig()}, "friendly_name"},
			{totp.NewFactor{Identity: "user-0001", FriendlyName: "Ana\u200fphone", Config: totp.DefaultConfig()}, "friendly_name"},
			{totp.NewFactor{Identity: "user-0001", FriendlyName: "Ana\u200bphone", Config: totp.DefaultConfig()}, "friendly_name"},
			{totp.NewFactor{Identity: "user-0001", FriendlyName: "Ana\u061cphone", Config: totp.DefaultConfig()}, "friendly_name"},
			{totp.NewFactor{Identity: "user-0001", FriendlyName: "Ana\u3164phone", Config: totp.DefaultConfig()}, "friendly_name"},
			{totp.NewFactor{Identity: "user-0001", FriendlyName: "phone", Config: totp.Config{Alg: totp.SHA1, Digits: 9, Period: 30}}, "digits"},
			{totp.NewFactor{Identity: "user-0001", FriendlyName: "phone", Config: totp.DefaultConfig(), Secret: []byte("short")}, "secret"},
		} {
			if _, err := e.svc.CreateFactor(ctx, app, c.n); invalidFields(err)[c.field] == "" {
				t.Errorf("%+v: got %v, want a problem with %s", c.n, err, c.field)
			}
		}
		if list, err := e.svc.Entities(ctx, app.ID); err != nil || len(list) != 0 {
			t.Errorf("entities after bad input: got %+v %v, want none", list, err)
		}
		en, err := e.svc.CreateFactor(ctx, app, totp.NewFactor{Identity: "user-0001", FriendlyName: "phone", Config: totp.DefaultConfig()})
		if err != nil {
			t.Fatal(err)
		}
		for _, code := range []string{"", "12", "123456789", "12a456"} {
			if _, _, err := e.svc.VerifyFactor(ctx, app.ID, "user-0001", en.Factor.ID, code); invalidFields(err)["code"] == "" {
				t.Errorf("code %q: got %v, want a problem with code", code, err)
			}
		}
		if _, err := e.svc.RenameFactor(ctx, app.ID, "user-0001", en.Factor.ID, "Ana\u202egnp.exe"); invalidFields(err)["friendly_name"] == "" {
			t.Errorf("a rename with a right-to-left override: got %v, want a problem with friendly_name", err)
		}
		if _, err := e.svc.CreateEntity(ctx, app.ID, "user-0001"); !errors.Is(err, totp.ErrEntityExists) {
			t.Errorf("a second entity with one identity: got %v, want ErrEntityExists", err)
		}
		if _, err := e.svc.Factor(ctx, "01900000-0000-7000-8000-000000000002", "user-0001", en.Factor.ID); otp.ErrorCode(err) != otp.CodeNotFound {
			t.Errorf("another app's factor: got %v, want not found", err)
		}
	})
}

// TestTheSecretIsSealedAtRest reads the factor's row as the database holds it: neither the
// secret nor its base32 appears in it, in any column.
func TestTheSecretIsSealedAtRest(t *testing.T) {
	storesOf(t, []string{"postgres"}, func(t *testing.T, e *env, sql func(string, ...any) string) {
		secret := []byte("an own secret 1234567")
		en, err := e.svc.CreateFactor(t.Context(), app, totp.NewFactor{Identity: "user-0001", FriendlyName: "phone", Config: totp.DefaultConfig(), Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		row := sql(`SELECT row_to_json(f)::text FROM totp_factors f WHERE id = $1`, en.Factor.ID)
		sealed := sql(`SELECT encode(secret_sealed, 'hex') FROM totp_factors WHERE id = $1`, en.Factor.ID)
		for _, plain := range []string{string(secret), hex.EncodeToString(secret), en.Secret, strings.ToLower(en.Secret)} {
			if strings.Contains(row, plain) || strings.Contains(sealed, plain) {
				t.Errorf("the row holds the secret in plain (%q): %s", plain, row)
			}
		}
		if len(sealed) != 2*(12+len(secret)+16) {
			t.Errorf("sealed is %d hex digits, want nonce, ciphertext and tag (%d)", len(sealed), 2*(12+len(secret)+16))
		}
	})
}
