package contact

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// Region is an ISO 3166 alpha-2 code of a region the phone library has numbering plans
// for, upper-cased, such as "JP"; empty is none.
type Region string

// UnmarshalText reads one code in any letter case; empty (or only spaces) is none.
func (r *Region) UnmarshalText(text []byte) error {
	s := strings.ToUpper(strings.TrimSpace(string(text)))
	if s == "" {
		*r = ""
		return nil
	}
	if err := checkRegion(s); err != nil {
		return err
	}
	*r = Region(s)
	return nil
}

// String returns the code.
func (r Region) String() string { return string(r) }

// checkRegion tells apart a code of the wrong shape from one that names no region with
// phone numbers, such as "XX" or the non-geographic "001".
func checkRegion(s string) error {
	if phonenumbers.GetSupportedRegions()[s] {
		return nil
	}
	if len(s) != 2 || s[0] < 'A' || s[0] > 'Z' || s[1] < 'A' || s[1] > 'Z' {
		return errors.New("not an ISO 3166 alpha-2 code (two letters, such as JP)")
	}
	return errors.New("not a region with phone numbers (an ISO 3166 alpha-2 code, such as JP)")
}

// Countries is a comma-separated list of regions, such as "JP,US"; empty allows every country.
type Countries []string

// UnmarshalText reads the list, each entry as Region does; an empty entry is an error
// naming its place, as is an unknown code.
func (c *Countries) UnmarshalText(text []byte) error {
	s := string(text)
	if strings.TrimSpace(s) == "" {
		*c = nil
		return nil
	}
	var out Countries
	for i, part := range strings.Split(s, ",") {
		var r Region
		if strings.TrimSpace(part) == "" {
			return fmt.Errorf("entry %d %q: empty: want codes like JP,US", i+1, part)
		}
		if err := r.UnmarshalText([]byte(part)); err != nil {
			return fmt.Errorf("entry %d %q: %w", i+1, part, err)
		}
		out = append(out, string(r))
	}
	*c = out
	return nil
}

// String renders the list in the form UnmarshalText reads back.
func (c Countries) String() string { return strings.Join(c, ",") }
