// Phone entry: the numbers the component sends and shows.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load } from "./load.mjs";

const p = await load("src/phone.ts");

test("NationalSpellingsBecomeE164", () => {
  assert.equal(p.toE164("090-1234-5678", "JP"), "+819012345678");
  assert.equal(p.toE164("(201) 555-0123", "US"), "+12015550123");
  assert.equal(p.toE164("+44 7400 123456", "JP"), "+447400123456");
  assert.equal(p.toE164(" nonsense ", "JP"), "nonsense");
});

test("FormattedAsTyped", () => {
  assert.equal(p.formatTyped("09012345678", "JP").text, "090-1234-5678");
  assert.equal(p.formatTyped("+4474", "US").country, undefined);
  assert.equal(p.formatTyped("+447400123456", "US").country, "GB");
});

test("DefaultCountry", () => {
  assert.equal(p.defaultCountry("jp", []), "JP");
  assert.equal(p.defaultCountry(null, ["ja"]), "JP");
  assert.equal(p.defaultCountry("", ["en-GB"]), "GB");
  assert.equal(p.defaultCountry("zz", ["??"]), "US");
});

test("CountriesAreNamedInTheLocale", () => {
  const list = p.countries("de");
  const de = list.find((c) => c.code === "DE");
  assert.equal(de.label, "Deutschland +49");
  assert.ok(list.length > 200);
});
