package delivery_test

import (
	"fmt"
	"testing"

	"otpgate/internal/delivery"
)

func TestRoutesSyntax(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"twilio", "*:twilio"},
		{"JP:webhook,twilio;*:twilio", "JP:webhook,twilio;*:twilio"},
		{" jp , kr : webhook , twilio ; twilio ", "JP,KR:webhook,twilio;*:twilio"},
		{"US:twilio", "US:twilio"},
	} {
		var r delivery.Routes
		if err := r.UnmarshalText([]byte(tc.in)); err != nil || r.String() != tc.want {
			t.Errorf("%q: got %q, %v, want %q", tc.in, r.String(), err, tc.want)
		}
	}
	for _, bad := range []string{"", ";", "JP:", ":twilio", "JPN:twilio", "JP:twilio;JP:webhook", "*:a;*:b", "JP,*:twilio", "JP:twilio,twilio", "JP:Twilio", "1P:twilio"} {
		var r delivery.Routes
		if err := r.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q: got %v, want an error", bad, r)
		}
	}
}

func TestInstancesSyntax(t *testing.T) {
	var l delivery.Instances
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
		var l delivery.Instances
		if err := l.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q: got %v, want an error", bad, l)
		}
	}
}
