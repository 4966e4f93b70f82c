// Phone entry: the countries to choose from, named in the page's language, and the number
// formatted as the user types it, with libphonenumber-js's metadata.
import {
  AsYouType,
  getCountries,
  getCountryCallingCode,
  parsePhoneNumberFromString,
  type CountryCode,
} from "libphonenumber-js/min";

/** One choice of the country list. */
export interface Country {
  code: CountryCode;
  label: string;
}

/** countries lists every country the metadata knows, named in locale and sorted by name. */
export function countries(locale: string): Country[] {
  let names: Intl.DisplayNames | undefined;
  try {
    names = new Intl.DisplayNames([locale, "en"], { type: "region" });
  } catch {
    names = undefined;
  }
  const collator = new Intl.Collator(locale);
  return getCountries()
    .map((code) => ({ code, name: names?.of(code) ?? code }))
    .sort((a, b) => collator.compare(a.name, b.name))
    .map(({ code, name }) => ({ code, label: `${name} +${getCountryCallingCode(code)}` }));
}

/** isCountry reports whether code is a country the metadata knows. */
export function isCountry(code: string): code is CountryCode {
  return (getCountries() as string[]).includes(code);
}

/**
 * defaultCountry is the country to preselect: the one asked for, else the region of the
 * page's or browser's language (en-GB → GB), else the United States.
 */
export function defaultCountry(asked: string | null, languages: readonly string[]): CountryCode {
  const want = (asked || "").toUpperCase();
  if (isCountry(want)) return want;
  for (const tag of languages) {
    try {
      const region = new Intl.Locale(tag).maximize().region;
      if (region && isCountry(region)) return region;
    } catch {
      // An unreadable tag says nothing.
    }
  }
  return "US";
}

/** formatTyped formats what the user typed so far, as it would be written in country. */
export function formatTyped(text: string, country: CountryCode): { text: string; country?: CountryCode } {
  const t = new AsYouType(country);
  const out = t.input(text);
  return { text: out, country: t.getCountry() };
}

/**
 * toE164 is the number to send: E.164 when the text reads as a number of country (or, with
 * a leading +, of any), else the text as typed, for the server to refuse with its reason.
 */
export function toE164(text: string, country: CountryCode): string {
  const p = parsePhoneNumberFromString(text, country);
  return p ? p.number : text.trim();
}

/** display writes an E.164 number as its country writes it internationally. */
export function display(e164: string): string {
  const p = parsePhoneNumberFromString(e164);
  return p ? p.formatInternational() : e164;
}
