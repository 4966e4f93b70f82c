package otp

import "testing"

func TestDefaultLocaleIsOneTheAppAccepts(t *testing.T) {
	const japan = "+819012345678"
	for _, tc := range []struct {
		name    string
		accepts []string
		want    string
	}{
		{"EveryLocale", nil, "ja"},
		{"TheCountrysLanguage", []string{"en", "ja"}, "ja"},
		{"EnglishWhenTheCountrysIsNotAccepted", []string{"de", "en"}, "en"},
		{"TheFirstAcceptedWhenNeither", []string{"de", "fr"}, "de"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := Config{}.DefaultApp()
			app.Locales = tc.accepts
			s := &Service{channels: Channels()}
			got, err := s.sendTarget(SendInput{Phone: japan}, app)
			if err != nil || got.locale != tc.want {
				t.Errorf("got %q, %v; want %q", got.locale, err, tc.want)
			}
		})
	}
}
