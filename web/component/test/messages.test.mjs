// The component's words: every locale has every sentence, every problem code of the API
// has a sentence, and the page's language picks the locale the API would.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { load } from "./load.mjs";

const m = await load("src/messages.ts");

test("EveryLocaleHasEverySentence", () => {
  const keys = Object.keys(m.texts.en).sort();
  for (const [locale, t] of Object.entries(m.texts)) {
    assert.deepEqual(Object.keys(t).sort(), keys, locale);
    for (const k of keys) {
      assert.ok(t[k].trim(), `${locale}.${k} is empty`);
      // A sentence keeps the fields the English one fills.
      for (const field of m.texts.en[k].match(/\{\w+\}/g) ?? []) {
        assert.ok(t[k].includes(field), `${locale}.${k} lacks ${field}: ${t[k]}`);
      }
    }
  }
});

test("EveryProblemCodeOfTheAPIHasASentence", () => {
  const schema = readFileSync(new URL("../../client/src/schema.ts", import.meta.url), "utf8");
  const codes = new Set();
  for (const [, list] of schema.matchAll(/code\??: ("[a-z_]+"(?: \| "[a-z_]+")*);/g)) {
    for (const [, c] of list.matchAll(/"([a-z_]+)"/g)) codes.add(c);
  }
  assert.ok(codes.size > 15, `found only ${[...codes]} in the schema`);
  for (const c of codes) assert.ok(c in m.problemKeys, `no sentence for problem code ${c}`);
  for (const key of Object.values(m.problemKeys)) assert.ok(key in m.texts.en, key);
});

test("ASendsNotFoundIsNoCodesSentence", () => {
  assert.equal(m.problemKey("not_found", "check"), "gone");
  assert.equal(m.problemKey("not_found", "send"), "failed");
  assert.equal(m.problemKey("rate_limited", "send"), "rateLimited");
  assert.equal(m.problemKey("something_new"), "failed");
});

test("LocaleOfThePagesLanguage", () => {
  for (const [tag, want] of [
    ["ja", "ja"], ["ja-JP", "ja"], ["JA", "ja"], ["en-US", "en"], ["en-GB", "en-GB"], ["en-AU", "en-GB"],
    ["zh", "zh-Hans"], ["zh-CN", "zh-Hans"], ["zh-TW", "zh-Hant"], ["zh-Hant-HK", "zh-Hant"],
    ["pt", "pt"], ["pt-BR", "pt-BR"], ["pt_br", "pt-BR"], ["no", "nb"], ["nb-NO", "nb"], ["fil", "tl"],
    ["iw", "he"], ["de-CH", "de"], ["xx", "en"], ["", "en"], [null, "en"],
  ]) {
    assert.equal(m.localeOf(tag), want, String(tag));
  }
});

test("ClockNeedsNoPlural", () => {
  assert.equal(m.clock(0), "0:00");
  assert.equal(m.clock(5), "0:05");
  assert.equal(m.clock(59.2), "1:00");
  assert.equal(m.clock(60), "1:00");
  assert.equal(m.clock(3725), "1:02:05");
  assert.equal(m.format(m.texts.en.rateLimited, { t: m.clock(42) }), "Too many requests. Try again in 0:42.");
  assert.equal(m.format(m.texts.ja.invalidCode, { n: 3 }), "コードが違います。残りの試行回数: 3。");
});
