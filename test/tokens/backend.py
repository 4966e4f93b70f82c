# A backend's side of otpgate's verification tokens with PyJWT (Debian: python3-jwt):
# verify the token a page got from an approved check against the published keys, then
# redeem it once. docs/browser.md shows this file; test/conformance's library test runs it.
import json
import urllib.request

import jwt


class OtpgateBackend:
    def __init__(self, base, app_id, key, issuer=None):
        self.base, self.app_id, self.key = base, app_id, key
        self.issuer = issuer or base
        # Fetches the key set, caches it, and fetches again for a key id it does not know.
        self.jwks = jwt.PyJWKClient(base + "/.well-known/jwks.json")

    def verify_token(self, token, leeway=0, options=None):
        key = self.jwks.get_signing_key_from_jwt(token).key
        return jwt.decode(
            token,
            key,
            algorithms=["ES256", "EdDSA"],
            audience=self.app_id,
            issuer=self.issuer,
            leeway=leeway,
            options={"require": ["exp", "iat", "jti"], **(options or {})},
        )  # app, address (or address_index), channel, verification_id, ...

    def redeem_token(self, token):
        """Marks the token used: a second redeem raises HTTPError 409 (token_redeemed)."""
        req = urllib.request.Request(
            f"{self.base}/v1/apps/{self.app_id}/tokens/redeem",
            data=json.dumps({"token": token}).encode(),
            headers={"Content-Type": "application/json", "Authorization": "Bearer " + self.key},
            method="POST",
        )
        with urllib.request.urlopen(req) as resp:
            return json.load(resp)
