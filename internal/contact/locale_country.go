package contact

import "strings"

// countryLanguages are the countries whose numbers get a locale other than en when a
// send names none: the language their official text messages are usually written in,
// among the built-in locales. Where several languages share a country, the one most of
// its people read (Belgium nl, Switzerland de, Morocco ar); where English is the usual
// language of such messages (India, Singapore, the Philippines, South Africa), en. The
// British-English countries take en-GB. docs/delivery.md lists the same table.
var countryLanguages = map[string]string{
	"ja":      "JP",
	"zh-Hans": "CN",
	"zh-Hant": "TW HK MO",
	"ko":      "KR",
	"es":      "ES MX AR BO CL CO CR CU DO EC GQ GT HN NI PA PE PR PY SV UY VE",
	"fr":      "FR MC LU BF BI BJ BL CD CF CG CI CM DJ GA GF GN GP HT KM MF MG ML MQ NC NE PF PM RE SN TD TG WF YT",
	"de":      "DE AT CH LI",
	"pt-BR":   "BR",
	"pt":      "PT AO CV GW MZ ST TL",
	"it":      "IT SM VA",
	"id":      "ID",
	"en-GB":   "GB IE AU NZ GG JE IM GI FK MT",
	"nl":      "NL BE SR AW CW SX BQ",
	"sv":      "SE AX",
	"da":      "DK GL FO",
	"nb":      "NO SJ",
	"fi":      "FI",
	"et":      "EE",
	"lt":      "LT",
	"pl":      "PL",
	"cs":      "CZ",
	"sk":      "SK",
	"hr":      "HR",
	"hu":      "HU",
	"ro":      "RO MD",
	"ru":      "RU BY KZ KG",
	"uk":      "UA",
	"tr":      "TR",
	"el":      "GR CY",
	"he":      "IL",
	"ar":      "AE BH DZ EG IQ JO KW LB LY MA MR OM PS QA SA SD SY TN YE",
	"th":      "TH",
	"vi":      "VN",
	"ms":      "MY BN",
	"ca":      "AD",
}

// countryLocale is countryLanguages by country, built once and never changed.
var countryLocale = func() map[string]string {
	m := map[string]string{}
	for l, countries := range countryLanguages {
		for _, c := range strings.Fields(countries) {
			m[c] = l
		}
	}
	return m
}()

// CountryLocale is the locale a number of the region gets when a send names none:
// the country's language when otpgate has messages in it, else en.
func CountryLocale(region string) string {
	if l, ok := countryLocale[strings.ToUpper(region)]; ok {
		return l
	}
	return "en"
}
