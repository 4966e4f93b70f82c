package providers_test

import (
	"fmt"
	"testing"

	"otpgate/internal/providers"
)

func TestInstancesSyntax(t *testing.T) {
	var l providers.Instances
	if err := l.UnmarshalText([]byte("twilio, backup:webhook ,jp_tw:twilio,mail:smtp")); err != nil {
		t.Fatalf("got %v, want nil", err)
	}
	got := fmt.Sprint(l)
	if got != "[{twilio twilio} {backup webhook} {jp_tw twilio} {mail smtp}]" {
		t.Errorf("got %s", got)
	}
	if l[0].EnvSuffix() != "" || l[2].EnvSuffix() != "_JP_TW" {
		t.Errorf("suffixes: got %q and %q, want none and _JP_TW", l[0].EnvSuffix(), l[2].EnvSuffix())
	}
	for _, bad := range []string{"", "a:fax", "Twilio", "a:twilio,a:webhook", "a,,b", "1a:log", "a-b:log"} {
		var l providers.Instances
		if err := l.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q: got %v, want an error", bad, l)
		}
	}
	t.Run("AnUnknownKindListsTheRegisteredOnes", func(t *testing.T) {
		var l providers.Instances
		err := l.UnmarshalText([]byte("a:fax"))
		want := `"a:fax": kind "fax": must be log, webhook, twilio, telnyx, infobip, sns, vonage, plivo, sinch or smtp`
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	})
}
