// Drives backend.mjs against the servers test/conformance's TestTokenLibraries started; the
// cases come in OTPGATE_CASES (see that test). Exits non-zero on the first failure.
import assert from 'node:assert/strict';
import { otpgateBackend } from './backend.mjs';

const c = JSON.parse(process.env.OTPGATE_CASES);
const current = otpgateBackend({ base: c.base, appId: c.app, key: c.key, issuer: c.issuer });
const retired = otpgateBackend({ base: c.retired_base, appId: c.app, key: c.key, issuer: c.issuer });

async function refused(what, promise, code) {
  await assert.rejects(promise, (err) => (code === undefined || err.code === code), what);
}

const claims = await current.verifyToken(c.token);
assert.equal(claims.address, c.address, 'address claim');
assert.equal(claims.app, c.app, 'app claim');
assert.equal(claims.channel, 'sms', 'channel claim');
// A token of the previous key verifies while it is published beside the new one.
await current.verifyToken(c.old_token);
// Expired: the same token, a second after its exp.
await refused('expired', current.verifyToken(c.token, { currentDate: new Date((claims.exp + 1) * 1000) }), 'ERR_JWT_EXPIRED');
// Retired: the key set without the old key refuses its token, and still takes the new.
await refused('retired key', retired.verifyToken(c.old_token), 'ERR_JWKS_NO_MATCHING_KEY');
await retired.verifyToken(c.token);
for (const [name, forged] of Object.entries(c.forged)) {
  await refused(`forged: ${name}`, current.verifyToken(forged));
}
await current.redeemToken(c.token);
await refused('redeemed twice', current.redeemToken(c.token));
await assert.rejects(current.redeemToken(c.token), /409 token_redeemed/);
console.log('node jose: all token cases passed');
