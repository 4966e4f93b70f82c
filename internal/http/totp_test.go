package http

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	pqtotp "github.com/pquerna/otp/totp"

	"otpgate/internal/apps"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/ratelimit"
	"otpgate/internal/testenv"
	"otpgate/internal/totp"
)

// totpEnv is the public API over the real TOTP service, apps registry and limiter (on
// Redis), with a key app and a clock the test moves.
type totpEnv struct {
	h      http.Handler
	base   string
	bearer map[string]string
	mu     sync.Mutex
	now    time.Time
}

func (e *totpEnv) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func newTOTPEnv(t *testing.T) *totpEnv {
	t.Helper()
	store := inmem.New()
	reg := apps.NewRegistry(store, otp.Config{CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5}.DefaultApp(), discardLogger())
	admin := apps.NewAdmin(store, reg)
	name, access := "Acme", otp.AccessKey
	info, err := admin.CreateApp(t.Context(), apps.Patch{Name: &name, Access: &access}, "test")
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	key, err := admin.CreateKey(t.Context(), info.App.ID, apps.NewKey{Name: "server"}, "test")
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	rdb, prefix := testenv.Redis(t)
	sealer, err := totp.NewSealer([]byte("test secret"))
	if err != nil {
		t.Fatal(err)
	}
	e := &totpEnv{now: time.Now().UTC(), base: "/v1/apps/" + info.App.ID + "/totp/entities/user-0001",
		bearer: map[string]string{"Authorization": "Bearer " + key.Secret}}
	svc := totp.NewService(store, ratelimit.New(rdb, prefix), sealer, func() string { return uuid.Must(uuid.NewV7()).String() })
	svc.Now = e.clock
	e.h, _ = newTestServer(t, &stubVerifier{}, func(d *Deps) { d.Apps, d.TOTP = reg, svc })
	return e
}

// decodeJSON reads an answer's body as a T.
func decodeJSON[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return v
}

func TestNativeTOTPFlow(t *testing.T) {
	e := newTOTPEnv(t)
	if w := post(t, e.h, e.base+"/factors", `{"friendly_name":"phone"}`, nil); w.Code != http.StatusUnauthorized {
		t.Fatalf("without a key: got %d %s, want 401", w.Code, w.Body)
	}
	w := post(t, e.h, e.base+"/factors", `{"friendly_name":"Ana's phone","digits":8}`, e.bearer)
	if w.Code != http.StatusCreated || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("create: got %d %s, want 201 no-store", w.Code, w.Body)
	}
	en := decodeJSON[totpEnrolment](t, w.Body.Bytes())
	if en.Status != "unverified" || en.Digits != 8 || !strings.HasPrefix(en.URI, "otpauth://totp/Acme:") {
		t.Fatalf("create: got %+v", en)
	}
	qr, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(en.QRPNG, "data:image/png;base64,"))
	if want, _ := totp.QRPNG(en.URI); err != nil || !bytes.Equal(qr, want) {
		t.Errorf("qr_png: got %d bytes (%v), want the PNG of the URI's QR code", len(qr), err)
	}
	code := func(at time.Time) string {
		c, err := pqtotp.GenerateCodeCustom(en.Secret, at, pqtotp.ValidateOpts{Period: 30, Digits: 8})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	factor := e.base + "/factors/" + en.ID
	right := code(e.clock())
	wrong := "00000000"
	if wrong == right {
		wrong = "00000001"
	}
	if w := post(t, e.h, e.base+"/challenges", `{"factor_id":"`+en.ID+`","code":"`+right+`"}`, e.bearer); w.Code != http.StatusBadRequest ||
		!strings.Contains(w.Body.String(), `"factor_id"`) {
		t.Errorf("challenge of an unverified factor: got %d %s, want 400 naming factor_id", w.Code, w.Body)
	}
	if w := post(t, e.h, factor+"/verify", `{"code":"`+wrong+`"}`, e.bearer); w.Code != http.StatusUnprocessableEntity {
		t.Errorf("wrong code: got %d %s, want 422", w.Code, w.Body)
	}
	w = post(t, e.h, factor+"/verify", `{"code":"`+right+`"}`, e.bearer)
	if w.Code != http.StatusOK || decodeJSON[totpFactor](t, w.Body.Bytes()).Status != "verified" {
		t.Fatalf("right code: got %d %s, want 200 verified", w.Code, w.Body)
	}
	if w := post(t, e.h, factor+"/verify", `{"code":"`+right+`"}`, e.bearer); w.Code != http.StatusUnprocessableEntity {
		t.Errorf("the same code again: got %d %s, want 422", w.Code, w.Body)
	}
	challenge := func(code string) string {
		t.Helper()
		w := post(t, e.h, e.base+"/challenges", `{"factor_id":"`+en.ID+`","code":"`+code+`"}`, e.bearer)
		if w.Code != http.StatusCreated {
			t.Fatalf("challenge: got %d %s, want 201", w.Code, w.Body)
		}
		return decodeJSON[totpChallenge](t, w.Body.Bytes()).Status
	}
	if got := challenge(right); got != "denied" {
		t.Errorf("challenge with the code that verified: got %s, want denied", got)
	}
	e.mu.Lock()
	e.now = e.now.Add(30 * time.Second)
	e.mu.Unlock()
	next := code(e.clock())
	if got := challenge(next); got != "approved" {
		t.Errorf("challenge with the next code: got %s, want approved", got)
	}
	if got := challenge(next); got != "denied" {
		t.Errorf("the next code again: got %s, want denied", got)
	}
	w = do(t, e.h, request{method: http.MethodGet, path: e.base + "/factors", header: e.bearer})
	if list := decodeJSON[struct{ Factors []totpFactor }](t, w.Body.Bytes()); w.Code != http.StatusOK || len(list.Factors) != 1 ||
		strings.Contains(w.Body.String(), en.Secret) {
		t.Errorf("list: got %d %s, want the one factor without its secret", w.Code, w.Body)
	}
	if w := do(t, e.h, request{method: http.MethodDelete, path: factor, header: e.bearer}); w.Code != http.StatusNoContent {
		t.Errorf("delete: got %d %s", w.Code, w.Body)
	}
	if w := do(t, e.h, request{method: http.MethodGet, path: factor, header: e.bearer}); w.Code != http.StatusNotFound {
		t.Errorf("after delete: got %d %s, want 404", w.Code, w.Body)
	}
}

func TestNativeTOTPBadInputNamesTheFieldAndChangesNothing(t *testing.T) {
	e := newTOTPEnv(t)
	for body, field := range map[string]string{
		`{"friendly_name":"phone","digits":9}`:  `"digits"`,
		`{"friendly_name":"phone","period":10}`: `"period"`,
		`{"friendly_name":"phone","skew":3}`:    `"skew"`,
		`{"friendly_name":"phone","alg":"md5"}`: `"alg"`,
		`{"friendly_name":""}`:                  `"friendly_name"`,
		`{"friendly_name":"phone","x":1}`:       `x`,
	} {
		if w := post(t, e.h, e.base+"/factors", body, e.bearer); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), field) {
			t.Errorf("%s: got %d %s, want 400 naming %s", body, w.Code, w.Body, field)
		}
	}
	bad := strings.Replace(e.base, "user-0001", "short", 1)
	if w := post(t, e.h, bad+"/factors", `{"friendly_name":"phone"}`, e.bearer); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"identity"`) {
		t.Errorf("bad identity: got %d %s, want 400 naming identity", w.Code, w.Body)
	}
	if w := do(t, e.h, request{method: http.MethodGet, path: e.base + "/factors", header: e.bearer}); w.Code != http.StatusNotFound {
		t.Errorf("after bad input: got %d %s, want no entity (404)", w.Code, w.Body)
	}
}

func TestNativeTOTPGuessesAreLimited(t *testing.T) {
	e := newTOTPEnv(t)
	w := post(t, e.h, e.base+"/factors", `{"friendly_name":"phone"}`, e.bearer)
	if w.Code != http.StatusCreated {
		t.Fatalf("create: got %d %s", w.Code, w.Body)
	}
	en := decodeJSON[totpEnrolment](t, w.Body.Bytes())
	right, err := pqtotp.GenerateCodeCustom(en.Secret, e.clock(), pqtotp.ValidateOpts{Period: 30, Digits: 6})
	if err != nil {
		t.Fatal(err)
	}
	wrong := "000000"
	if wrong == right {
		wrong = "000001"
	}
	verify := e.base + "/factors/" + en.ID + "/verify"
	for i := range 5 {
		if w := post(t, e.h, verify, `{"code":"`+wrong+`"}`, e.bearer); w.Code != http.StatusUnprocessableEntity {
			t.Fatalf("wrong guess %d: got %d %s, want 422", i+1, w.Code, w.Body)
		}
	}
	w = post(t, e.h, verify, `{"code":"`+right+`"}`, e.bearer)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), `"totp_factor"`) {
		t.Errorf("sixth guess: got %d %s, want 429 on totp_factor with Retry-After", w.Code, w.Body)
	}
	w = do(t, e.h, request{method: http.MethodGet, path: e.base + "/factors/" + en.ID, header: e.bearer})
	if f := decodeJSON[totpFactor](t, w.Body.Bytes()); f.Status != "unverified" {
		t.Errorf("after a refused guess with the right code: got %s, want unverified (nothing decided)", f.Status)
	}
}
