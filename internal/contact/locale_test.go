package contact

import (
	"slices"
	"strings"
	"testing"
)

func TestCountryLocale(t *testing.T) {
	for region, want := range map[string]string{
		"JP": "ja", "BR": "pt-BR", "FR": "fr", "PT": "pt", "GB": "en-GB", "US": "en", "NG": "en", "IN": "en",
		"jp": "ja", "TW": "zh-Hant", "CN": "zh-Hans", "RU": "ru", "UA": "uk", "SA": "ar", "BE": "nl", "": "en",
	} {
		if got := CountryLocale(region); got != want {
			t.Errorf("%q: got %q, want %q", region, got, want)
		}
	}
}

func TestCountryTableNamesRegionsAndLocalesThatExist(t *testing.T) {
	seen := map[string]string{}
	for l, countries := range countryLanguages {
		if !slices.Contains(locales, l) {
			t.Errorf("locale %q is not built in", l)
		}
		for _, c := range strings.Fields(countries) {
			if err := checkRegion(c); err != nil {
				t.Errorf("%s: %q: %v", l, c, err)
			}
			if other, dup := seen[c]; dup {
				t.Errorf("%s is listed for %s and %s", c, other, l)
			}
			seen[c] = l
		}
	}
}
