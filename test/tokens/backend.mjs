// A backend's side of otpgate's verification tokens with the jose library: verify the
// token a page got from an approved check against the published keys, then redeem it
// once. docs/browser.md shows this file; test/conformance's library test runs it.
import { createRemoteJWKSet, jwtVerify } from 'jose';

export function otpgateBackend({ base, appId, key, issuer = base }) {
  // Fetched once, cached, and fetched again for a key id it does not know yet.
  const jwks = createRemoteJWKSet(new URL('/.well-known/jwks.json', base));

  async function verifyToken(token, options = {}) {
    const { payload } = await jwtVerify(token, jwks, {
      issuer,
      audience: appId,
      algorithms: ['ES256', 'EdDSA'],
      requiredClaims: ['exp', 'iat', 'jti'],
      ...options,
    });
    return payload; // app, address (or address_index), channel, verification_id, ...
  }

  // Marks the token used: a second redeem is 409 token_redeemed.
  async function redeemToken(token) {
    const res = await fetch(`${base}/v1/apps/${appId}/tokens/redeem`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
      body: JSON.stringify({ token }),
    });
    const body = await res.json();
    if (!res.ok) throw new Error(`redeem: ${res.status} ${body.code}`);
    return body;
  }

  return { verifyToken, redeemToken };
}
