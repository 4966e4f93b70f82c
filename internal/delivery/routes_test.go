package delivery_test

import (
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
