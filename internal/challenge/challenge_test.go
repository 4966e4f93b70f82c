package challenge_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"otpgate/internal/challenge"
	"otpgate/internal/otp"
	"otpgate/internal/proof"
	"otpgate/internal/rate"
)

var (
	now  = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	bind = proof.Binding{App: "0193a4c2-7d1e-7c3a-9b1e-2f4d5a6b7c8d", Address: "+998901234567", ClientIP: "192.0.2.7"}
)

func newChallenger(o challenge.Options) *challenge.Challenger {
	if o.Secret == nil {
		o.Secret = []byte("0123456789abcdef0123456789abcdef")
	}
	return challenge.New(o)
}

func mustIssue(t *testing.T, c *challenge.Challenger, level int) proof.Challenge {
	t.Helper()
	ch, err := c.Issue(level, bind, now)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func mustSolve(t *testing.T, ch proof.Challenge) string {
	t.Helper()
	p, ok := challenge.Solve(ch)
	if !ok {
		t.Fatalf("no number up to %d solves %+v", ch.MaxNumber, ch)
	}
	return p
}

// wantInvalid fails unless err refuses the solution.
func wantInvalid(t *testing.T, err error, what string) {
	t.Helper()
	var inv *proof.ErrChallengeInvalid
	if !errors.As(err, &inv) {
		t.Errorf("%s: got %v, want *proof.ErrChallengeInvalid", what, err)
	}
}

func TestProofOfWork(t *testing.T) {
	ctx := context.Background()
	c := newChallenger(challenge.Options{Complexity: 1000})

	t.Run("ASolutionSolvesItsLevel", func(t *testing.T) {
		for level := 1; level <= 3; level++ {
			ch := mustIssue(t, c, level)
			if ch.Algorithm != "SHA-256" || ch.MaxNumber != c.MaxNumber(level) || len(ch.Challenge) != 64 || len(ch.Signature) != 64 {
				t.Fatalf("level %d: got %+v, want an ALTCHA SHA-256 challenge of maxnumber %d", level, ch, c.MaxNumber(level))
			}
			got, err := c.Verify(ctx, proof.Solution{Altcha: mustSolve(t, ch)}, bind, now.Add(time.Minute))
			if err != nil || got.Level != level || got.ID != ch.Challenge || !got.Expires.After(now) {
				t.Errorf("level %d: got %+v %v, want solved at the level, spent under the challenge", level, got, err)
			}
		}
		if c.MaxNumber(3) != 16*c.MaxNumber(1) {
			t.Errorf("work: got %d at level 3, want 16 times level 1's %d", c.MaxNumber(3), c.MaxNumber(1))
		}
	})

	t.Run("IndependentSolverAgrees", func(t *testing.T) {
		// A solver written from the ALTCHA format alone, as a widget solves: SHA-256 of the
		// salt and the number in decimal.
		ch := mustIssue(t, c, 1)
		number := -1
		for n := 0; n <= ch.MaxNumber; n++ {
			h := sha256.Sum256([]byte(ch.Salt + strconv.Itoa(n)))
			if hex.EncodeToString(h[:]) == ch.Challenge {
				number = n
				break
			}
		}
		raw, _ := json.Marshal(map[string]any{"algorithm": ch.Algorithm, "challenge": ch.Challenge, "number": number,
			"salt": ch.Salt, "signature": ch.Signature, "took": 12})
		if _, err := c.Verify(ctx, proof.Solution{Altcha: base64.StdEncoding.EncodeToString(raw)}, bind, now); err != nil {
			t.Errorf("got %v, want the widget's payload accepted", err)
		}
	})

	t.Run("RefusedSolutions", func(t *testing.T) {
		ch := mustIssue(t, c, 2)
		good := mustSolve(t, ch)
		var p map[string]any
		raw, _ := base64.StdEncoding.DecodeString(good)
		_ = json.Unmarshal(raw, &p)
		edited := func(k string, v any) string {
			q := map[string]any{}
			for kk, vv := range p {
				q[kk] = vv
			}
			q[k] = v
			b, _ := json.Marshal(q)
			return base64.StdEncoding.EncodeToString(b)
		}
		forged := newChallenger(challenge.Options{Secret: []byte("another secret of thirty-two bytes!"), Complexity: 1000})
		fc := mustIssue(t, forged, 3)
		for name, c2 := range map[string]struct {
			solution string
			b        proof.Binding
			at       time.Time
		}{
			"NotBase64":           {"%%%", bind, now},
			"NotJSON":             {base64.StdEncoding.EncodeToString([]byte("nope")), bind, now},
			"WrongNumber":         {edited("number", p["number"].(float64)+1), bind, now},
			"OtherAlgorithm":      {edited("algorithm", "SHA-1"), bind, now},
			"EditedSalt":          {edited("salt", strings.Replace(ch.Salt, "level=2", "level=3", 1)), bind, now},
			"Expired":             {good, bind, now.Add(challenge.DefaultTTL + time.Second)},
			"AnotherNumber":       {good, proof.Binding{App: bind.App, Address: "+998901234568", ClientIP: bind.ClientIP}, now},
			"AnotherClient":       {good, proof.Binding{App: bind.App, Address: bind.Address, ClientIP: "192.0.2.8"}, now},
			"AnotherApp":          {good, proof.Binding{App: "0193a4c2-7d1e-7c3a-9b1e-2f4d5a6b7c8e", Address: bind.Address, ClientIP: bind.ClientIP}, now},
			"IssuedElsewhere":     {mustSolve(t, fc), bind, now},
			"NoCaptchaConfigured": {"", bind, now},
		} {
			t.Run(name, func(t *testing.T) {
				s := proof.Solution{Altcha: c2.solution}
				if name == "NoCaptchaConfigured" {
					s = proof.Solution{Captcha: "token"}
				}
				_, err := c.Verify(ctx, s, c2.b, c2.at)
				wantInvalid(t, err, name)
			})
		}
	})
}

// decoded reads a payload back into its fields.
func decoded(t *testing.T, text string) map[string]any {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func encoded(p map[string]any) string {
	raw, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(raw)
}

func TestProofOfWorkCannotBeShortened(t *testing.T) {
	ctx := context.Background()
	c := newChallenger(challenge.Options{Complexity: 1000})

	t.Run("ADigitMovedIntoTheSaltIsRefused", func(t *testing.T) {
		// The number's first digit moved to the end of the salt keeps SHA-256(salt+number)
		// unchanged; it must not raise the level or pass at all.
		for tries := 0; ; tries++ {
			if tries > 200 {
				t.Fatal("no challenge with a number of two digits or more, the second not 0")
			}
			ch := mustIssue(t, c, 1)
			p := decoded(t, mustSolve(t, ch))
			digits := strconv.Itoa(int(p["number"].(float64)))
			if len(digits) < 2 || digits[1] == '0' {
				continue
			}
			rest, _ := strconv.Atoi(digits[1:])
			p["salt"], p["number"] = ch.Salt+digits[:1], rest
			got, err := c.Verify(ctx, proof.Solution{Altcha: encoded(p)}, bind, now)
			wantInvalid(t, err, fmt.Sprintf("salt %q, number %d (solved at level %d)", p["salt"], rest, got.Level))
			return
		}
	})

	t.Run("TheSaltEndsWithADelimiter", func(t *testing.T) {
		ch := mustIssue(t, c, 2)
		if !strings.HasSuffix(ch.Salt, "&") {
			t.Errorf("salt: got %q, want it to end with & so that no digit can extend its parameters", ch.Salt)
		}
	})

	t.Run("ASolutionIsForItsAppOnly", func(t *testing.T) {
		other := proof.Binding{App: "0193a4c2-7d1e-7c3a-9b1e-2f4d5a6b7c8e", Address: bind.Address, ClientIP: bind.ClientIP}
		solution := mustSolve(t, mustIssue(t, c, 3))
		_, err := c.Verify(ctx, proof.Solution{Altcha: solution}, other, now)
		wantInvalid(t, err, "a solution of another app")
		if got, err := c.Verify(ctx, proof.Solution{Altcha: solution}, bind, now); err != nil || got.Level != 3 {
			t.Errorf("its own app: got %+v %v, want solved at level 3", got, err)
		}
	})
}

// siteverify is a fake CAPTCHA provider that checks what it is sent and spends each token once.
type siteverify struct {
	mu     sync.Mutex
	spent  map[string]bool
	bodies []string
}

func (s *siteverify) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		http.Error(w, "want a form POST", http.StatusBadRequest)
		return
	}
	_ = r.ParseForm()
	s.bodies = append(s.bodies, r.PostForm.Encode())
	ok := r.PostForm.Get("secret") == "s3cret" && strings.HasPrefix(r.PostForm.Get("response"), "good") && !s.spent[r.PostForm.Get("response")]
	s.spent[r.PostForm.Get("response")] = true
	_ = json.NewEncoder(w).Encode(map[string]any{"success": ok})
}

func TestCaptcha(t *testing.T) {
	ctx := context.Background()
	fake := &siteverify{spent: map[string]bool{}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	for _, provider := range challenge.Providers() {
		t.Run(provider, func(t *testing.T) {
			cap, err := challenge.NewCaptcha(provider, "s3cret", srv.URL, srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			c := newChallenger(challenge.Options{Captcha: cap})
			token := "good-" + provider
			got, err := c.Verify(ctx, proof.Solution{Captcha: token}, bind, now)
			if err != nil || got.Level != rate.ChallengeBlocked || got.ID == "" {
				t.Fatalf("got %+v %v, want a token solving every level", got, err)
			}
			last := fake.bodies[len(fake.bodies)-1]
			if !strings.Contains(last, "remoteip=192.0.2.7") || !strings.Contains(last, "secret=s3cret") {
				t.Errorf("siteverify got %q, want the secret, the token and the client's address", last)
			}
			_, err = c.Verify(ctx, proof.Solution{Captcha: token}, bind, now)
			wantInvalid(t, err, "a token used twice")
			_, err = c.Verify(ctx, proof.Solution{Captcha: "bad"}, bind, now)
			wantInvalid(t, err, "a refused token")
			_, err = c.Verify(ctx, proof.Solution{Captcha: "good-x", Altcha: "y"}, bind, now)
			wantInvalid(t, err, "both a token and a proof of work")
		})
	}
	t.Run("ProviderDownIsUnavailable", func(t *testing.T) {
		down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
		defer down.Close()
		cap, _ := challenge.NewCaptcha("turnstile", "s3cret", down.URL, down.Client())
		_, err := newChallenger(challenge.Options{Captcha: cap}).Verify(ctx, proof.Solution{Captcha: "good"}, bind, now)
		if !errors.Is(err, otp.ErrUnavailable) {
			t.Errorf("got %v, want it to wrap otp.ErrUnavailable", err)
		}
	})
	t.Run("UnknownProvider", func(t *testing.T) {
		if _, err := challenge.NewCaptcha("friendlycaptcha", "s", "", nil); err == nil {
			t.Error("got nil, want an error naming the providers")
		}
	})
}
