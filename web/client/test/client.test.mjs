// The client against a fetch that records what it is asked and answers as the server would.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createClient, ProblemError, altchaPayload, retryAfterSeconds } from "../dist/index.js";

// fakeFetch answers each request with the next of answers and keeps the requests.
function fakeFetch(...answers) {
  const seen = [];
  const fetch = async (req) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body: req.body ? await req.text() : "" });
    const a = answers.shift();
    if (a instanceof Error) throw a;
    return new Response(JSON.stringify(a.body), {
      status: a.status,
      headers: { "Content-Type": a.status < 400 ? "application/json" : "application/problem+json" },
    });
  };
  return { fetch, seen };
}

const verification = {
  id: "0b6f7c1e-3b1f-4a4e-9f3a-3c2f1d2e4b5a",
  phone: "+819012345678",
  channel: "sms",
  status: "pending",
  expires_at: "2026-01-01T00:05:00Z",
  next_resend_at: "2026-01-01T00:01:00Z",
  sends_left: 4,
};

test("SendPostsToTheAppsPath", async () => {
  const f = fakeFetch({ status: 201, body: verification });
  const c = createClient({ baseUrl: "https://otp.example.com/", app: "my-app", fetch: f.fetch });
  const got = await c.send({ phone: "090-1234-5678", channel: "sms", locale: "ja" }, { idempotencyKey: "k1" });
  assert.equal(got.status, 201);
  assert.deepEqual(got.verification, verification);
  assert.equal(f.seen.length, 1);
  assert.equal(f.seen[0].method, "POST");
  assert.equal(f.seen[0].url, "https://otp.example.com/v1/apps/my-app/verifications");
  assert.equal(f.seen[0].headers.get("content-type"), "application/json");
  assert.equal(f.seen[0].headers.get("idempotency-key"), "k1");
  assert.deepEqual(JSON.parse(f.seen[0].body), { phone: "090-1234-5678", channel: "sms", locale: "ja" });
});

test("ResendIs200", async () => {
  const f = fakeFetch({ status: 200, body: verification });
  const got = await createClient({ baseUrl: "http://otp.test", fetch: f.fetch }).send({ phone: "+819012345678" });
  assert.equal(got.status, 200);
  assert.equal(f.seen[0].url.endsWith("/v1/apps/default/verifications"), true, f.seen[0].url);
  assert.equal(f.seen[0].headers.get("idempotency-key"), null);
});

test("CheckAnswersTheResultWithItsToken", async () => {
  const f = fakeFetch({ status: 200, body: { id: verification.id, phone: verification.phone, status: "approved", token: "a.b.c" } });
  const got = await createClient({ fetch: f.fetch, baseUrl: "http://x" }).check({ id: verification.id, code: "123456" });
  assert.equal(got.status, "approved");
  assert.equal(got.token, "a.b.c");
  assert.equal(f.seen[0].url, "http://x/v1/apps/default/verifications/check");
  assert.deepEqual(JSON.parse(f.seen[0].body), { id: verification.id, code: "123456" });
});

test("ARefusalThrowsItsProblem", async () => {
  const problem = {
    type: "urn:otpgate:problem:rate_limited", title: "Too many requests", status: 429,
    detail: "phone: 1 per 60s", code: "rate_limited", retry_after_seconds: 42,
    violations: [{ scope: "phone", limit: 1, window_seconds: 60, retry_after_seconds: 42 }],
  };
  const f = fakeFetch({ status: 429, body: problem });
  await assert.rejects(createClient({ baseUrl: "http://otp.test", fetch: f.fetch }).send({ phone: "+819012345678" }), (err) => {
    assert.ok(err instanceof ProblemError);
    assert.equal(err.status, 429);
    assert.equal(err.code, "rate_limited");
    assert.equal(retryAfterSeconds(err.problem), 42);
    return true;
  });
});

test("NoAnswerIsANetworkProblem", async () => {
  const f = fakeFetch(new TypeError("Failed to fetch"));
  await assert.rejects(createClient({ baseUrl: "http://otp.test", fetch: f.fetch }).check({ phone: "+1", code: "1234" }), (err) => {
    assert.ok(err instanceof ProblemError);
    assert.equal(err.code, "network");
    assert.equal(err.status, 0);
    return true;
  });
});

test("AnAnswerThatIsNoProblemStillThrowsOne", async () => {
  const fetch = async () => new Response("<html>bad gateway</html>", { status: 502, headers: { "Content-Type": "text/html" } });
  await assert.rejects(createClient({ baseUrl: "http://otp.test", fetch }).send({ phone: "+1" }), (err) => {
    assert.equal(err.status, 502);
    assert.equal(err.code, "unavailable");
    return true;
  });
});

test("AltchaPayloadIsBase64OfTheSolvedChallenge", () => {
  const c = { algorithm: "SHA-256", challenge: "ab".repeat(32), maxnumber: 1000, salt: "s1?expires=1&level=1", signature: "cd".repeat(32) };
  const got = JSON.parse(Buffer.from(altchaPayload(c, 77), "base64").toString("utf8"));
  assert.deepEqual(got, { algorithm: "SHA-256", challenge: c.challenge, number: 77, salt: c.salt, signature: c.signature });
});
