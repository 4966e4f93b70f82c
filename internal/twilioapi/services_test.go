package twilioapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/inmem"
	"otpgate/internal/message"
	"otpgate/internal/otp"
	"otpgate/internal/twilioapi"
)

const (
	accountToken = "0123456789abcdef0123456789abcdef"
	accountSID   = "AC0123456789abcdef0123456789abcdef"
)

// accountAPI is the Twilio API over real apps in memory, with the account credential
// and one key of the default app.
type accountAPI struct {
	h              http.Handler
	admin          *apps.Admin
	store          *inmem.Store
	keyID, keySecr string
}

func newAccountAPI(t *testing.T, configure ...func(*otp.Config)) *accountAPI {
	t.Helper()
	mem := inmem.New()
	cfg := otp.Config{CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5}
	for _, c := range configure {
		c(&cfg)
	}
	reg := apps.NewRegistry(mem, cfg.DefaultApp(), slog.New(slog.DiscardHandler))
	if err := reg.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	admin := apps.NewAdmin(mem, reg)
	k, err := admin.CreateKey(t.Context(), otp.DefaultAppAlias, apps.NewKey{Name: "default"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	texts, err := message.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := twilioapi.NewHandler(twilioapi.Deps{
		Apps: reg, Admin: admin, Attempts: mem, Texts: texts, AccountToken: accountToken, PublicURL: "http://example.com",
		ClientIP: func(*http.Request, apps.Key) (string, error) { return "192.0.2.1", nil },
	})
	return &accountAPI{h: h, admin: admin, store: mem, keyID: k.Key.ID, keySecr: k.Secret}
}

// twilioAnswer is one answer of the API, its JSON decoded.
type twilioAnswer struct {
	status int
	header http.Header
	body   map[string]any
}

func (a twilioAnswer) code() int {
	c, _ := a.body["code"].(float64)
	return int(c)
}

// do calls the API as user with password: a form POST when form is set, else method with the query in path.
func (a *accountAPI) do(t *testing.T, user, pass, method, path string, form url.Values) twilioAnswer {
	t.Helper()
	var r *http.Request
	if form != nil {
		r = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	if user != "" {
		r.SetBasicAuth(user, pass)
	}
	w := httptest.NewRecorder()
	a.h.ServeHTTP(w, r)
	out := twilioAnswer{status: w.Code, header: w.Header()}
	if w.Body.Len() > 0 {
		if err := json.Unmarshal(w.Body.Bytes(), &out.body); err != nil {
			t.Fatalf("%s %s: %v in %q", method, path, err, w.Body.String())
		}
	}
	return out
}

func (a *accountAPI) account(t *testing.T, method, path string, form url.Values) twilioAnswer {
	t.Helper()
	return a.do(t, accountSID, accountToken, method, path, form)
}

func wantError(t *testing.T, what string, got twilioAnswer, code, status int) {
	t.Helper()
	if got.code() != code || got.status != status {
		t.Errorf("%s: got %d %v, want %d with status %d", what, got.status, got.body, code, status)
	}
}

func TestServices(t *testing.T) {
	t.Run("TheAccountCreatesListsFetchesUpdatesAndDeletes", func(t *testing.T) {
		a := newAccountAPI(t)
		got := a.account(t, http.MethodPost, "/Services", url.Values{"FriendlyName": {"Shop"}, "CodeLength": {"8"}, "LookupEnabled": {"false"}})
		sid, _ := got.body["sid"].(string)
		if got.status != http.StatusCreated || !strings.HasPrefix(sid, "VA") || got.body["friendly_name"] != "Shop" || got.body["code_length"] != 8.0 ||
			got.body["do_not_share_warning_enabled"] != true || got.body["url"] != "http://example.com/v2/Services/"+sid {
			t.Fatalf("create: got %d %v, want 201 with the new service", got.status, got.body)
		}
		id, _ := apps.IDFromSID(sid, "VA")
		app, err := a.store.AppByID(t.Context(), id)
		if err != nil || app.Name != "Shop" || app.CodeLength != 8 || app.Access != otp.AccessKey {
			t.Errorf("stored: got %+v, %v; want the app named Shop, 8 digits, access key", app, err)
		}

		list := a.account(t, http.MethodGet, "/Services", nil)
		services, _ := list.body["services"].([]any)
		if list.status != http.StatusOK || len(services) != 2 || services[0].(map[string]any)["sid"] != apps.ServiceSID(otp.DefaultAppID) {
			t.Errorf("list: got %v, want the default app and Shop", list.body)
		}
		if got := a.account(t, http.MethodGet, "/Services/"+sid, nil); got.status != http.StatusOK || got.body["friendly_name"] != "Shop" {
			t.Errorf("fetch: got %d %v", got.status, got.body)
		}
		got = a.account(t, http.MethodPost, "/Services/"+sid, url.Values{"FriendlyName": {"Shop 2"}, "CodeLength": {"4"}})
		if got.status != http.StatusOK || got.body["friendly_name"] != "Shop 2" || got.body["code_length"] != 4.0 {
			t.Errorf("update: got %d %v", got.status, got.body)
		}
		if got := a.account(t, http.MethodDelete, "/Services/"+sid, nil); got.status != http.StatusNoContent {
			t.Errorf("delete: got %d %v, want 204", got.status, got.body)
		}
		wantError(t, "fetch after delete", a.account(t, http.MethodGet, "/Services/"+sid, nil), 20404, 404)
	})

	t.Run("TheDefaultAppIsNotListedWhenItIsOff", func(t *testing.T) {
		a := newAccountAPI(t, func(c *otp.Config) { c.DefaultAccess = otp.AccessOff })
		sid := a.account(t, http.MethodPost, "/Services", url.Values{"FriendlyName": {"Shop"}}).body["sid"]
		list := a.account(t, http.MethodGet, "/Services", nil)
		services, _ := list.body["services"].([]any)
		if list.status != http.StatusOK || len(services) != 1 || services[0].(map[string]any)["sid"] != sid {
			t.Errorf("list: got %v, want Shop alone", list.body)
		}
		wantError(t, "fetch the default app's Service", a.account(t, http.MethodGet, "/Services/"+apps.ServiceSID(otp.DefaultAppID), nil), 20404, 404)
	})

	t.Run("BadInputIs60200NamingEachParameterAndChangesNothing", func(t *testing.T) {
		a := newAccountAPI(t)
		for name, form := range map[string]url.Values{
			"NoName":          {"CodeLength": {"6"}},
			"CodeTooShort":    {"FriendlyName": {"x"}, "CodeLength": {"3"}},
			"CodeNotANumber":  {"FriendlyName": {"x"}, "CodeLength": {"six"}},
			"Lookup":          {"FriendlyName": {"x"}, "LookupEnabled": {"true"}},
			"NotABoolean":     {"FriendlyName": {"x"}, "CustomCodeEnabled": {"yes"}},
			"NoWarning":       {"FriendlyName": {"x"}, "DoNotShareWarningEnabled": {"false"}},
			"Push":            {"FriendlyName": {"x"}, "Push.ApnCredentialSid": {"CR" + strings.Repeat("a", 32)}},
			"UnknownParam":    {"FriendlyName": {"x"}, "Colour": {"blue"}},
			"NameTwice":       {"FriendlyName": {"x", "y"}},
			"NameOnTwoLines":  {"FriendlyName": {"a\nb"}},
			"EmptyName":       {"FriendlyName": {" "}},
			"CustomCodeTrue":  {"FriendlyName": {"x"}, "CustomCodeEnabled": {"True"}},
			"Psd2NotABoolean": {"FriendlyName": {"x"}, "Psd2Enabled": {"on"}},
			"TemplateUnknown": {"FriendlyName": {"x"}, "DefaultTemplateSid": {"HJ" + strings.Repeat("a", 32)}},
		} {
			got := a.account(t, http.MethodPost, "/Services", form)
			wantError(t, name, got, 60200, 400)
			if msg, _ := got.body["message"].(string); !strings.Contains(msg, "`") {
				t.Errorf("%s: message %q names no parameter", name, msg)
			}
		}
		if set, _ := a.store.LoadApps(t.Context()); len(set.Apps) != 0 {
			t.Errorf("got %d apps, want none created", len(set.Apps))
		}
		wantError(t, "update of the default app", a.account(t, http.MethodPost, "/Services/"+apps.ServiceSID(otp.DefaultAppID), url.Values{"FriendlyName": {"x"}}), 60200, 400)
		wantError(t, "delete of the default app", a.account(t, http.MethodDelete, "/Services/"+apps.ServiceSID(otp.DefaultAppID), nil), 60200, 400)
	})

	t.Run("Psd2EnabledIsTheAppsPSD2", func(t *testing.T) {
		a := newAccountAPI(t)
		got := a.account(t, http.MethodPost, "/Services", url.Values{"FriendlyName": {"Bank"}, "Psd2Enabled": {"true"}})
		sid, _ := got.body["sid"].(string)
		if got.status != http.StatusCreated || got.body["psd2_enabled"] != true {
			t.Fatalf("create: got %d %v, want 201 with psd2_enabled true", got.status, got.body)
		}
		id, _ := apps.IDFromSID(sid, "VA")
		if app, err := a.store.AppByID(t.Context(), id); err != nil || !app.PSD2 {
			t.Errorf("stored: got PSD2=%v, %v; want true", app.PSD2, err)
		}
		got = a.account(t, http.MethodPost, "/Services/"+sid, url.Values{"Psd2Enabled": {"false"}})
		if got.status != http.StatusOK || got.body["psd2_enabled"] != false {
			t.Errorf("update: got %d %v, want psd2_enabled false", got.status, got.body)
		}
		if app, _ := a.store.AppByID(t.Context(), id); app.PSD2 {
			t.Errorf("stored after the update: PSD2 still on")
		}
	})

	t.Run("OnlyTheAccountTokenIsTheAccount", func(t *testing.T) {
		a := newAccountAPI(t)
		for name, creds := range map[string][2]string{
			"WrongToken":     {accountSID, accountToken[:31] + "0"},
			"ShortSID":       {"AC0123", accountToken},
			"NoCredentials":  {"", ""},
			"EmptyPassword":  {accountSID, ""},
			"KeyWithAccount": {"SK" + strings.Repeat("0", 32), accountToken},
		} {
			got := a.do(t, creds[0], creds[1], http.MethodGet, "/Services", nil)
			wantError(t, name, got, 20003, 401)
			if got.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: no WWW-Authenticate", name)
			}
		}
		off := twilioapi.NewHandler(twilioapi.Deps{Apps: apps.NewRegistry(inmem.New(), otp.App{}, slog.New(slog.DiscardHandler)), Admin: a.admin})
		r := httptest.NewRequest(http.MethodGet, "/Services", nil)
		r.SetBasicAuth(accountSID, "")
		w := httptest.NewRecorder()
		off.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("no account token configured: got %d, want 401", w.Code)
		}
	})

	t.Run("AnAppKeyReadsItsOwnServiceAndChangesNone", func(t *testing.T) {
		a := newAccountAPI(t)
		other := a.account(t, http.MethodPost, "/Services", url.Values{"FriendlyName": {"Other"}}).body["sid"].(string)
		own := apps.ServiceSID(otp.DefaultAppID)
		list := a.do(t, a.keyID, a.keySecr, http.MethodGet, "/Services", nil)
		if services, _ := list.body["services"].([]any); len(services) != 1 || services[0].(map[string]any)["sid"] != own {
			t.Errorf("list: got %v, want only its own service", list.body)
		}
		if got := a.do(t, a.keyID, a.keySecr, http.MethodGet, "/Services/"+own, nil); got.status != http.StatusOK {
			t.Errorf("fetch own: got %d %v", got.status, got.body)
		}
		wantError(t, "fetch another", a.do(t, a.keyID, a.keySecr, http.MethodGet, "/Services/"+other, nil), 20404, 404)
		wantError(t, "create", a.do(t, a.keyID, a.keySecr, http.MethodPost, "/Services", url.Values{"FriendlyName": {"x"}}), 20003, 401)
		wantError(t, "update another", a.do(t, a.keyID, a.keySecr, http.MethodPost, "/Services/"+other, url.Values{"FriendlyName": {"x"}}), 20404, 404)
		wantError(t, "update own", a.do(t, a.keyID, a.keySecr, http.MethodPost, "/Services/"+own, url.Values{"FriendlyName": {"x"}}), 20003, 401)
		wantError(t, "delete own", a.do(t, a.keyID, a.keySecr, http.MethodDelete, "/Services/"+own, nil), 20003, 401)
	})

	t.Run("ListsArePaged", func(t *testing.T) {
		a := newAccountAPI(t)
		for _, n := range []string{"A", "B", "C", "D"} {
			a.account(t, http.MethodPost, "/Services", url.Values{"FriendlyName": {n}})
		}
		var names []string
		next := "/Services?PageSize=2"
		for pages := 0; next != ""; pages++ {
			if pages > 3 {
				t.Fatal("the pages never end")
			}
			got := a.account(t, http.MethodGet, next, nil)
			services, _ := got.body["services"].([]any)
			for _, s := range services {
				names = append(names, s.(map[string]any)["friendly_name"].(string))
			}
			m := got.body["meta"].(map[string]any)
			if m["key"] != "services" || m["page_size"] != 2.0 || m["page"] != float64(pages) {
				t.Errorf("page %d: meta %v", pages, m)
			}
			next, _ = m["next_page_url"].(string)
			next = strings.TrimPrefix(next, "http://example.com/v2")
		}
		if strings.Join(names, ",") != "default,A,B,C,D" {
			t.Errorf("got %v, want every service once, the default one first", names)
		}
		for _, q := range []string{"PageSize=0", "PageSize=1001", "Page=-1", "PageToken=PT1", "Colour=blue"} {
			wantError(t, q, a.account(t, http.MethodGet, "/Services?"+q, nil), 60200, 400)
		}
	})
}
