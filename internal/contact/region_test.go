package contact

import (
	"slices"
	"testing"
)

func TestRegionUnmarshalText(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     Region
		wantErr  string // "" for none
	}{
		{"CodeIsKept", "JP", "JP", ""},
		{"LowerCaseIsUpperCased", " jp ", "JP", ""},
		{"EmptyIsNone", "", "", ""},
		{"SpacesAreNone", "  ", "", ""},
		{"AlphaThreeIsRefused", "JPN", "", "not an ISO 3166 alpha-2 code (two letters, such as JP)"},
		{"DigitIsRefused", "J1", "", "not an ISO 3166 alpha-2 code (two letters, such as JP)"},
		{"NonGeographicIsRefused", "001", "", "not an ISO 3166 alpha-2 code (two letters, such as JP)"},
		{"UnknownCodeIsRefused", "XX", "", "not a region with phone numbers (an ISO 3166 alpha-2 code, such as JP)"},
		{"UnitedKingdomIsGB", "UK", "", "not a region with phone numbers (an ISO 3166 alpha-2 code, such as JP)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r Region
			err := r.UnmarshalText([]byte(c.in))
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("got %v (region %q), want %v", err, r, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if r != c.want {
				t.Errorf("got %q, want %q", r, c.want)
			}
		})
	}
}

func TestCountriesUnmarshalText(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     Countries
		wantErr  string // "" for none
	}{
		{"ListIsUpperCased", "jp, us ,GB", Countries{"JP", "US", "GB"}, ""},
		{"OneCode", "JP", Countries{"JP"}, ""},
		{"EmptyIsAll", "", nil, ""},
		{"SpacesAreAll", " ", nil, ""},
		{"UnknownEntryIsNamed", "JP,XX", nil, `entry 2 "XX": not a region with phone numbers (an ISO 3166 alpha-2 code, such as JP)`},
		{"AlphaThreeEntryIsNamed", "JPN,US", nil, `entry 1 "JPN": not an ISO 3166 alpha-2 code (two letters, such as JP)`},
		{"EmptyEntryIsNamed", "JP,,US", nil, `entry 2 "": empty: want codes like JP,US`},
		{"TrailingCommaIsNamed", "JP,", nil, `entry 2 "": empty: want codes like JP,US`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := Countries{"FR"} // a value that must be replaced, or kept on error
			err := cs.UnmarshalText([]byte(c.in))
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("got %v (countries %v), want %v", err, cs, c.wantErr)
				}
				if !slices.Equal(cs, Countries{"FR"}) {
					t.Errorf("got %v after an error, want it unchanged", cs)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if !slices.Equal(cs, c.want) {
				t.Errorf("got %v, want %v", cs, c.want)
			}
		})
	}
}

func TestCountriesString(t *testing.T) {
	if got, want := (Countries{"JP", "US"}).String(), "JP,US"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
