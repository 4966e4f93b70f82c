package spend

import (
	"strings"
	"testing"
)

func TestParseAmount(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Micros
		bad  string
	}{
		{in: "0.05", want: 50_000}, {in: "1", want: 1_000_000}, {in: "0.0083", want: 8300},
		{in: "12.345678", want: 12_345_678}, {in: ".5", want: 500_000}, {in: "3.", want: 3_000_000},
		{in: "-0.05", bad: "negative"}, {in: "abc", bad: "decimal"}, {in: "", bad: "decimal"},
		{in: "1e3", bad: "decimal"}, {in: "0.1234567", bad: "six decimals"}, {in: "99999999", bad: "decimal"},
		{in: "+1", bad: "decimal"}, {in: "1,5", bad: "decimal"},
	} {
		got, err := ParseAmount(c.in)
		switch {
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("ParseAmount(%q): got %v, %v, want an error saying %q", c.in, got, err, c.bad)
		case c.bad == "" && (err != nil || got != c.want):
			t.Errorf("ParseAmount(%q): got %v, %v, want %v", c.in, got, err, c.want)
		}
	}
}

func TestFormatAmountReadsBack(t *testing.T) {
	for _, m := range []Micros{0, 1, 8300, 50_000, 1_000_000, 12_345_678} {
		s := FormatAmount(m)
		if got, err := ParseAmount(s); err != nil || got != m {
			t.Errorf("FormatAmount(%d) = %q reads back as %d, %v", m, s, got, err)
		}
	}
	if got := FormatAmount(50_000); got != "0.05" {
		t.Errorf("got %q, want 0.05", got)
	}
}

func TestDefaultTable(t *testing.T) {
	tab := DefaultTable()
	if tab.Currency != "USD" || len(tab.Prices) < 50 {
		t.Fatalf("got %s with %d prices, want USD and every major market", tab.Currency, len(tab.Prices))
	}
	p := Compile(tab)
	for _, c := range []struct {
		channel, country string
		segments         int
		want             Micros
	}{
		{"sms", "US", 1, 8300}, {"sms", "US", 3, 24_900}, {"sms", "NG", 1, 365_000},
		{"sms", "ZW", 1, 100_000}, {"whatsapp", "IN", 4, 1400}, {"voice", "US", 1, 14_000}, {"email", "", 1, 100},
	} {
		if got := p.Cost(c.channel, c.country, "+1", "", c.segments); got != c.want {
			t.Errorf("%s to %s, %d segments: got %d, want %d", c.channel, c.country, c.segments, got, c.want)
		}
	}
}

func TestTheMostSpecificPriceApplies(t *testing.T) {
	p := Compile(Table{Currency: "USD", Prices: []Price{
		{Channel: "sms", Country: "*", Amount: 100},
		{Channel: "sms", Country: "GB", Amount: 200},
		{Channel: "sms", Country: "GB", Prefix: "+447", Amount: 300},
		{Channel: "sms", Country: "GB", Prefix: "+4470", Amount: 900},
		{Channel: "sms", Country: "GB", Provider: "cheap", Amount: 150},
		{Channel: "sms", Country: "GB", Prefix: "+447", Provider: "cheap", Amount: 250},
	}})
	for _, c := range []struct {
		country, address, provider string
		want                       Micros
	}{
		{"GB", "+441234567890", "", 200}, {"GB", "+447912345678", "", 300}, {"GB", "+447012345678", "", 900},
		{"GB", "+441234567890", "cheap", 150}, {"GB", "+447912345678", "cheap", 250}, {"GB", "+447012345678", "cheap", 900},
		{"FR", "+33612345678", "cheap", 100},
	} {
		if got, _ := p.Unit("sms", c.country, c.address, c.provider); got != c.want {
			t.Errorf("%s through %q: got %d, want %d", c.address, c.provider, got, c.want)
		}
	}
	if _, ok := p.Unit("voice", "GB", "+441234567890", ""); ok {
		t.Error("got a voice price from a table of SMS prices")
	}
}

func TestValidateNamesTheField(t *testing.T) {
	bad := Table{Currency: "usd", Prices: []Price{
		{Channel: "sms", Country: "US", Amount: 1},
		{Channel: "fax", Country: "US", Amount: 1},
		{Channel: "sms", Country: "XX", Amount: 1},
		{Channel: "sms", Country: "US", Amount: -1, Prefix: "+1"},
		{Channel: "sms", Country: "*", Prefix: "+1", Amount: 1},
		{Channel: "sms", Country: "US", Amount: 2},
		{Channel: "email", Country: "US", Amount: 2},
		{Channel: "sms", Country: "US", Prefix: "1x", Provider: "a", Amount: 2},
	}}
	f := bad.Validate()
	for _, name := range []string{"currency", "prices[1].channel", "prices[2].country", "prices[3].price",
		"prices[4].prefix", "prices[5].country", "prices[6].country", "prices[7].prefix"} {
		if f[name] == "" {
			t.Errorf("no problem named %s; got %v", name, f)
		}
	}
	if f["prices[0].channel"] != "" || f["prices[0].country"] != "" {
		t.Errorf("a sound price has problems: %v", f)
	}
	for _, cur := range []string{"XYZ", "US", "USDD", ""} {
		if f := (Table{Currency: cur}).Validate(); f["currency"] == "" {
			t.Errorf("currency %q: got no problem", cur)
		}
	}
	if f := (Table{Currency: "JPY"}).Validate(); len(f) != 0 {
		t.Errorf("JPY: got %v, want none", f)
	}
}
