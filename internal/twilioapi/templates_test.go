package twilioapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"otpgate/internal/apps"
	"otpgate/internal/templates"
)

func TestTemplates(t *testing.T) {
	a := newAccountAPI(t)
	shop := a.account(t, http.MethodPost, "/Services", url.Values{"FriendlyName": {"Shop"}}).body["sid"].(string)
	shopID, _ := apps.IDFromSID(shop, "VA")
	sms := "{{.App}} code {{.Code}}"
	if _, err := a.admin.UpdateApp(t.Context(), shopID, apps.Patch{Templates: &map[string]templates.Message{"en": {SMS: sms}}}, "test"); err != nil {
		t.Fatal(err)
	}
	list := a.account(t, http.MethodGet, "/Templates", nil)
	templates, _ := list.body["templates"].([]any)
	if list.status != http.StatusOK || len(templates) != 2 {
		t.Fatalf("got %d %v, want the built-in and Shop's templates", list.status, list.body)
	}
	builtin, own := templates[0].(map[string]any), templates[1].(map[string]any)
	ja, _ := builtin["translations"].(map[string]any)["ja"].(map[string]any)
	if builtin["sid"] != "HJ00000000000000000000000000000000" || ja == nil || !strings.Contains(ja["text"].(string), "{{.Code}}") {
		t.Errorf("built-in: got %v", builtin)
	}
	if own["sid"] != "HJ"+strings.ReplaceAll(shopID, "-", "") || own["friendly_name"] != "Shop" ||
		own["translations"].(map[string]any)["en"].(map[string]any)["text"] != sms {
		t.Errorf("Shop's: got %v", own)
	}
	if got := a.account(t, http.MethodGet, "/Templates?FriendlyName=SHO", nil); len(got.body["templates"].([]any)) != 1 {
		t.Errorf("FriendlyName filter: got %v", got.body)
	}
	if got := a.do(t, a.keyID, a.keySecr, http.MethodGet, "/Templates", nil); len(got.body["templates"].([]any)) != 1 {
		t.Errorf("the default app's key: got %v, want the built-in templates only", got.body)
	}
	wantError(t, "unknown parameter", a.account(t, http.MethodGet, "/Templates?Locale=en", nil), 60200, 400)
}
