package twilioapi_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/apps"
	"otpgate/internal/inmem"
	"otpgate/internal/ratelimit"
	"otpgate/internal/testenv"
	"otpgate/internal/totp"
	"otpgate/internal/twilioapi"
)

// newTOTPAPI is the adapter over the real TOTP service, in-memory store and the limiter on
// Redis.
func newTOTPAPI(t *testing.T) http.Handler {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	sealer, err := totp.NewSealer([]byte("test secret"))
	if err != nil {
		t.Fatal(err)
	}
	svc := totp.NewService(inmem.New(), ratelimit.New(rdb, prefix), sealer, func() string { return uuid.Must(uuid.NewV7()).String() })
	s := &stub{}
	return twilioapi.NewHandler(twilioapi.Deps{
		Verifier: s, Manager: s, Apps: s, TOTP: svc,
		ClientIP: func(*http.Request, apps.Key) (string, error) { return "192.0.2.1", nil },
	})
}

func TestTOTPBadParametersAre60200NamingThemAndChangeNothing(t *testing.T) {
	h := newTOTPAPI(t)
	entities := "/Services/" + apps.ServiceSID(appID) + "/Entities"
	factors := entities + "/user-0001/Factors"
	challenges := entities + "/user-0001/Challenges"
	for _, c := range []struct {
		path  string
		form  url.Values
		param string
	}{
		{entities, url.Values{}, "Identity"},
		{entities, url.Values{"Identity": {"short"}}, "Identity"},
		{entities, url.Values{"Identity": {"user-0001"}, "Foo": {"1"}}, "Foo"},
		{factors, url.Values{"FriendlyName": {"x"}, "FactorType": {"passkeys"}}, "FactorType"},
		{factors, url.Values{"FriendlyName": {"x"}}, "FactorType"},
		{factors, url.Values{"FactorType": {"totp"}}, "FriendlyName"},
		{factors, url.Values{"FriendlyName": {"x"}, "FactorType": {"totp"}, "Config.Alg": {"md5"}}, "Config.Alg"},
		{factors, url.Values{"FriendlyName": {"x"}, "FactorType": {"totp"}, "Config.TimeStep": {"10"}}, "Config.TimeStep"},
		{factors, url.Values{"FriendlyName": {"x"}, "FactorType": {"totp"}, "Config.Skew": {"3"}}, "Config.Skew"},
		{factors, url.Values{"FriendlyName": {"x"}, "FactorType": {"totp"}, "Binding.Secret": {"not base32!"}}, "Binding.Secret"},
		{factors, url.Values{"FriendlyName": {"x"}, "FactorType": {"totp"}, "Config.NotificationToken": {"t"}}, "Config.NotificationToken"},
		{factors, url.Values{"FriendlyName": {"x"}, "FactorType": {"totp"}, "FriendlyName ": {"y"}}, "FriendlyName "},
		{strings.Replace(factors, "user-0001", "short", 1), url.Values{"FriendlyName": {"x"}, "FactorType": {"totp"}}, "Identity"},
		{challenges, url.Values{"AuthPayload": {"123456"}}, "FactorSid"},
		{challenges, url.Values{"FactorSid": {"VE" + strings.Repeat("0", 32)}, "AuthPayload": {"123456"}}, "FactorSid"},
		{challenges, url.Values{"FactorSid": {"YF" + strings.Repeat("0", 32)}}, "AuthPayload"},
		{challenges, url.Values{"FactorSid": {"YF" + strings.Repeat("0", 32)}, "AuthPayload": {"1"}, "Details.Message": {"m"}}, "Details.Message"},
	} {
		st, body := call(t, h, http.MethodPost, c.path, c.form)
		msg, _ := body["message"].(string)
		if st != http.StatusBadRequest || body["code"] != float64(60200) || !strings.Contains(msg, "`"+c.param+"`") {
			t.Errorf("POST %s %v: got %d %v, want 400 60200 naming %s", c.path, c.form, st, body, c.param)
		}
	}
	st, body := call(t, h, http.MethodGet, entities, nil)
	if list, _ := body["entities"].([]any); st != http.StatusOK || len(list) != 0 {
		t.Errorf("entities after bad input: got %d %v, want none", st, body)
	}
}

func TestTOTPGuessesBeyondTheFactorsRulesAre20429WithRetryAfter(t *testing.T) {
	h := newTOTPAPI(t)
	base := "/Services/" + apps.ServiceSID(appID) + "/Entities/user-0001"
	st, nf := call(t, h, http.MethodPost, base+"/Factors", url.Values{"FriendlyName": {"phone"}, "FactorType": {"totp"}})
	if st != http.StatusCreated {
		t.Fatalf("create factor: got %d %v", st, nf)
	}
	sid := nf["sid"].(string)
	binding := nf["binding"].(map[string]any)
	secret, _ := totp.DecodeSecret(binding["secret"].(string))
	cfg := totp.DefaultConfig()
	code := cfg.Code(secret, cfg.Step(time.Now()))
	if st, f := call(t, h, http.MethodPost, base+"/Factors/"+sid, url.Values{"AuthPayload": {code}}); st != http.StatusOK || f["status"] != "verified" {
		t.Fatalf("verify: got %d %v", st, f)
	}
	wrong := "000000"
	if wrong == code || wrong == cfg.Code(secret, cfg.Step(time.Now())+1) {
		wrong = "999999"
	}
	for i := range 5 {
		if st, c := call(t, h, http.MethodPost, base+"/Challenges", url.Values{"FactorSid": {sid}, "AuthPayload": {wrong}}); st != http.StatusCreated || c["status"] != "denied" {
			t.Fatalf("wrong guess %d: got %d %v, want 201 denied", i+1, st, c)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/Services/"+apps.ServiceSID(appID)+"/Entities/user-0001/Challenges",
		strings.NewReader(url.Values{"FactorSid": {sid}, "AuthPayload": {wrong}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.SetBasicAuth("SK1", "secret")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), `"code":20429`) || w.Header().Get("Retry-After") == "" {
		t.Errorf("sixth guess: got %d %s Retry-After %q, want 429 20429 with Retry-After", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	if _, list := call(t, h, http.MethodGet, base+"/Challenges", nil); len(list["challenges"].([]any)) != 5 {
		t.Errorf("got %v, want the five decided challenges only", list["challenges"])
	}
}
