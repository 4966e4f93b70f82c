// Twilio's Node helper library against otpgate: every flow and error of the
// conformance test (cmd/server/twilio_clients_test.go starts the server and sets the
// environment). Prints one "ok" line per assertion; exits 1 at the first failure.
"use strict";
const twilio = require("twilio");
const { RestException } = require("twilio");

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const base = env("OTPGATE_BASE");
const [p1, p2, p3, p4] = env("OTPGATE_PHONES").split(",");
const serviceSid = env("OTPGATE_SERVICE_SID");

// The library's supported hook: a RequestClient of our own that sends every request
// to otpgate's public listener instead of Twilio's host.
class OtpgateClient extends twilio.RequestClient {
  request(opts) {
    opts.uri = opts.uri.replace(/^https:\/\/[^/]+/, base);
    return super.request(opts);
  }
}

const newClient = (secret) =>
  twilio(env("OTPGATE_KEY_ID"), secret, {
    accountSid: "AC" + serviceSid.slice(2),
    httpClient: new OtpgateClient(),
  });
const client = newClient(env("OTPGATE_SECRET"));
const service = (sid = serviceSid) => client.verify.v2.services(sid);

async function codeFor(to) {
  const res = await fetch(env("OTPGATE_CODE_URL") + "?to=" + encodeURIComponent(to));
  if (!res.ok) throw new Error(`no code for ${to}: ${res.status}`);
  return (await res.text()).trim();
}

function want(name, cond, got) {
  if (!cond) {
    console.error(`FAIL ${name}: got ${JSON.stringify(got)}`);
    process.exit(1);
  }
  console.log(`ok ${name}`);
}

async function wantError(name, code, status, fn) {
  try {
    const got = await fn();
    want(name, false, got);
  } catch (e) {
    want(`${name}: RestException ${code}`, e instanceof RestException && e.code === code && e.status === status,
      { type: e.constructor.name, code: e.code, status: e.status, message: e.message });
  }
}

(async () => {
  const v = await service().verifications.create({ to: p1, channel: "sms" });
  want("create: pending", v.status === "pending" && v.to === p1 && v.channel === "sms" && /^VE[0-9a-f]{32}$/.test(v.sid) &&
    v.serviceSid === serviceSid && v.valid === false && v.dateCreated instanceof Date && Array.isArray(v.sendCodeAttempts), v);
  const code = await codeFor(p1);
  const wrong = code === "000000" ? "111111" : "000000";

  let c = await service().verificationChecks.create({ to: p1, code: wrong });
  want("check wrong code: pending, not valid", c.status === "pending" && c.valid === false, c);
  c = await service().verificationChecks.create({ to: p1, code });
  want("check right code: approved", c.status === "approved" && c.valid === true && c.sid === v.sid, c);

  const f = await service().verifications(v.sid).fetch();
  want("fetch: approved", f.sid === v.sid && f.status === "approved" && f.to === p1, f);

  const other = await service().verifications.create({ to: p2, channel: "sms" });
  const canceled = await service().verifications(other.sid).update({ status: "canceled" });
  want("cancel: canceled", canceled.status === "canceled" && canceled.sid === other.sid, canceled);

  await wantError("unknown service", 20404, 404, () =>
    service("VA" + "f".repeat(32)).verifications.create({ to: p3, channel: "sms" }));
  await wantError("wrong secret", 20003, 401, () =>
    newClient(env("OTPGATE_SECRET").slice(0, -4) + "0000").verify.v2.services(serviceSid).verifications.create({ to: p3, channel: "sms" }));
  await wantError("bad To", 60200, 400, () => service().verifications.create({ to: "+1", channel: "sms" }));

  for (let i = 1; i <= 5; i++) {
    const s = await service().verifications.create({ to: p3, channel: "sms" });
    want(`send ${i} of 5: pending`, s.status === "pending", s);
  }
  await wantError("sixth send", 60203, 429, () => service().verifications.create({ to: p3, channel: "sms" }));

  await service().verifications.create({ to: p4, channel: "sms" });
  const right = await codeFor(p4);
  const bad = right === "000000" ? "111111" : "000000";
  for (let i = 1; i <= 5; i++) {
    const k = await service().verificationChecks.create({ to: p4, code: bad });
    want(`wrong check ${i} of 5: not valid`, k.valid === false, k);
  }
  await wantError("sixth wrong check", 60202, 429, () => service().verificationChecks.create({ to: p4, code: bad }));
  // The Services resource with the account credential (any account SID, OTP_ACCOUNT_TOKEN).
  const account = twilio(env("OTPGATE_ACCOUNT_SID"), env("OTPGATE_ACCOUNT_TOKEN"), { httpClient: new OtpgateClient() });
  const created = await account.verify.v2.services.create({ friendlyName: "Node conformance", codeLength: 7 });
  want("service create", /^VA[0-9a-f]{32}$/.test(created.sid) && created.friendlyName === "Node conformance" &&
    created.codeLength === 7 && created.lookupEnabled === false, created);
  const fetched = await account.verify.v2.services(created.sid).fetch();
  want("service fetch", fetched.sid === created.sid && fetched.codeLength === 7, fetched);
  const updated = await account.verify.v2.services(created.sid).update({ codeLength: 8 });
  want("service update", updated.codeLength === 8 && updated.friendlyName === "Node conformance", updated);
  const listed = (await account.verify.v2.services.list({ pageSize: 1 })).map((x) => x.sid);
  want("service list, one per page", listed.includes(created.sid) && listed.includes(serviceSid) && new Set(listed).size === listed.length, listed);
  await wantError("service LookupEnabled=true", 60200, 400, () =>
    account.verify.v2.services.create({ friendlyName: "x", lookupEnabled: true }));
  await wantError("service create with an app key", 20003, 401, () => client.verify.v2.services.create({ friendlyName: "x" }));
  want("service delete", (await account.verify.v2.services(created.sid).remove()) === true, created.sid);
  await wantError("service fetch after delete", 20404, 404, () => account.verify.v2.services(created.sid).fetch());
  // Verification Attempts of a new service: three verifications, one approved.
  const [m1, m2, m3] = env("OTPGATE_MORE_PHONES").split(",");
  const attemptsSvc = await account.verify.v2.services.create({ friendlyName: "Node attempts" });
  const sent = [];
  for (const to of [m1, m2, m3]) {
    sent.push((await account.verify.v2.services(attemptsSvc.sid).verifications.create({ to, channel: "sms" })).sid);
  }
  await account.verify.v2.services(attemptsSvc.sid).verificationChecks.create({ to: m2, code: await codeFor(m2) });
  const attempts = await account.verify.v2.verificationAttempts.list({ verifyServiceSid: attemptsSvc.sid, pageSize: 1 });
  want("attempts, one per page, newest first", JSON.stringify(attempts.map((a) => a.verificationSid)) === JSON.stringify([...sent].reverse()) &&
    attempts.every((a) => /^VL[0-9a-f]{32}$/.test(a.sid) && a.channel === "sms"), attempts);
  const conv = await account.verify.v2.verificationAttempts.list({ verifyServiceSid: attemptsSvc.sid, status: "converted" });
  want("converted attempts", conv.length === 1 && conv[0].verificationSid === sent[1], conv);
  const one = await account.verify.v2.verificationAttempts(attempts[0].sid).fetch();
  want("attempt fetch", one.sid === attempts[0].sid && one.conversionStatus === "unconverted", one);
  const sum = await account.verify.v2.verificationAttemptsSummary().fetch({ verifyServiceSid: attemptsSvc.sid });
  want("attempts summary", sum.totalAttempts === 3 && sum.totalConverted === 1 && sum.totalUnconverted === 2 &&
    sum.conversionRatePercentage === "33.33", sum);
  await wantError("attempts Channel=fax", 60200, 400, () => account.verify.v2.verificationAttempts.list({ channel: "fax" }));
  await wantError("another service's attempts with a key", 20404, 404, () =>
    client.verify.v2.verificationAttempts.list({ verifyServiceSid: attemptsSvc.sid }));
  const templates = await account.verify.v2.templates.list({ friendlyName: "built-in" });
  want("templates", templates.length === 1 && templates[0].sid === "HJ00000000000000000000000000000000" && "en" in templates[0].translations, templates);
  // TOTP: an entity, a factor verified with a first code, challenges approved once per code.
  // The codes are made here with node:crypto (RFC 6238), not by otpgate.
  const totpCode = (secretB32, atSeconds) => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let bits = "";
    for (const ch of secretB32) bits += alphabet.indexOf(ch).toString(2).padStart(5, "0");
    const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
    const msg = Buffer.alloc(8);
    msg.writeBigUInt64BE(BigInt(Math.floor(atSeconds / 30)));
    const mac = require("node:crypto").createHmac("sha1", key).update(msg).digest();
    const off = mac[mac.length - 1] & 0x0f;
    return String((mac.readUInt32BE(off) & 0x7fffffff) % 1000000).padStart(6, "0");
  };
  const identity = "node-" + p1.replace("+", "");
  const entity = await service().entities.create({ identity });
  want("entity create", /^YE[0-9a-f]{32}$/.test(entity.sid) && entity.identity === identity, entity);
  const factor = await service().entities(identity).newFactors.create({ friendlyName: "Node phone", factorType: "totp" });
  want("factor create: unverified, with its binding", factor.status === "unverified" && factor.factorType === "totp" &&
    factor.binding.uri.startsWith("otpauth://totp/") && factor.binding.secret.length === 32, factor);
  await wantError("challenge of an unverified factor", 60318, 403, () =>
    service().entities(identity).challenges.create({ factorSid: factor.sid, authPayload: "123456" }));
  const now = Date.now() / 1000;
  const first = totpCode(factor.binding.secret, now);
  const verified = await service().entities(identity).factors(factor.sid).update({ authPayload: first });
  want("factor verified by the first code", verified.status === "verified", verified);
  const replay = await service().entities(identity).challenges.create({ factorSid: factor.sid, authPayload: first });
  want("the same code again: denied", replay.status === "denied", replay);
  const next = totpCode(factor.binding.secret, now + 30);
  const approvedOne = await service().entities(identity).challenges.create({ factorSid: factor.sid, authPayload: next });
  want("the next code: approved", approvedOne.status === "approved" && approvedOne.factorSid === factor.sid, approvedOne);
  const approved = await service().entities(identity).challenges.list({ factorSid: factor.sid, status: "approved" });
  want("challenge list, approved", approved.length === 1 && approved[0].sid === approvedOne.sid, approved);
  await wantError("FactorType=push", 60200, 400, () =>
    service().entities(identity).newFactors.create({ friendlyName: "x", factorType: "push" }));
  want("entity delete", (await service().entities(identity).remove()) === true, identity);
  await wantError("entity fetch after delete", 20404, 404, () => service().entities(identity).fetch());
  // PSD2: a service with psd2Enabled binds each code to its amount and payee.
  const [x1, x2, x3, x4, x5] = env("OTPGATE_EXTRA_PHONES").split(",");
  const psd2 = await account.verify.v2.services.create({ friendlyName: "Node PSD2", psd2Enabled: true });
  want("psd2 service", psd2.psd2Enabled === true, psd2);
  const psvc = account.verify.v2.services(psd2.sid);
  const pv = await psvc.verifications.create({ to: x1, channel: "sms", amount: "€39.99", payee: "Acme Inc." });
  want("psd2 create shows amount and payee", pv.amount === "€39.99" && pv.payee === "Acme Inc.", pv);
  const pcode = await codeFor(x1);
  const otherPayee = await psvc.verificationChecks.create({ to: x1, code: pcode, amount: "€39.99", payee: "Acme Ltd." });
  want("psd2 check, another payee: pending", otherPayee.status === "pending" && otherPayee.valid === false, otherPayee);
  const same = await psvc.verificationChecks.create({ to: x1, code: pcode, amount: "€39.99", payee: "Acme Inc." });
  want("psd2 check, same amount and payee: approved", same.status === "approved" && same.valid === true, same);
  await wantError("psd2 create without payee", 60200, 400, () => psvc.verifications.create({ to: x2, channel: "sms", amount: "€1" }));
  // Rate Limits and Buckets: a bucket of max 2 on end_user_id.
  const rl = await psvc.rateLimits.create({ uniqueName: "end_user_id", description: "per user" });
  want("rate limit create", /^RK[0-9a-f]{32}$/.test(rl.sid) && rl.uniqueName === "end_user_id", rl);
  want("rate limit fetch", (await psvc.rateLimits(rl.sid).fetch()).description === "per user", rl.sid);
  const bucket = await psvc.rateLimits(rl.sid).buckets.create({ max: 2, interval: 60 });
  want("bucket create", /^BL[0-9a-f]{32}$/.test(bucket.sid) && bucket.max === 2 && bucket.interval === 60, bucket);
  const updatedBucket = await psvc.rateLimits(rl.sid).buckets(bucket.sid).update({ interval: 120 });
  want("bucket update", updatedBucket.max === 2 && updatedBucket.interval === 120, updatedBucket);
  want("bucket list", (await psvc.rateLimits(rl.sid).buckets.list()).length === 1, bucket.sid);
  const keyed = (to, user) => psvc.verifications.create({ to, channel: "sms", amount: "€1", payee: "Acme", rateLimits: { end_user_id: user } });
  await keyed(x2, "u1");
  await keyed(x3, "u1");
  await wantError("third send of one value over a bucket of 2", 20429, 429, () => keyed(x4, "u1"));
  want("another value has its own bucket", (await keyed(x5, "u2")).status === "pending", x5);
  want("rate limit delete", (await psvc.rateLimits(rl.sid).remove()) === true, rl.sid);
  await wantError("bucket fetch after its rate limit's delete", 20404, 404, () => psvc.rateLimits(rl.sid).buckets(bucket.sid).fetch());
  console.log("twilio-node " + require("twilio/package.json").version + ": all flows passed");
})().catch((e) => {
  console.error("FAIL unexpected error:", e);
  process.exit(1);
});
