# Drives backend.py against the servers test/conformance's TestTokenLibraries started; the
# cases come in OTPGATE_CASES (see that test). Exits non-zero on the first failure.
import json
import os
import sys
import time
import urllib.error

import jwt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backend import OtpgateBackend  # noqa: E402

c = json.loads(os.environ["OTPGATE_CASES"])
current = OtpgateBackend(c["base"], c["app"], c["key"], c["issuer"])
retired = OtpgateBackend(c["retired_base"], c["app"], c["key"], c["issuer"])


def refused(what, fn, *errors):
    try:
        fn()
    except errors or Exception:
        return
    raise AssertionError(what + ": accepted")


claims = current.verify_token(c["token"])
assert claims["address"] == c["address"], claims
assert claims["app"] == c["app"] and claims["channel"] == "sms", claims
# A token of the previous key verifies while it is published beside the new one.
current.verify_token(c["old_token"])
# Expired: the same token checked as a second after its exp. PyJWT has no clock to set: a
# negative leeway moves its "now" for exp, and for iat too, which this case leaves out.
late = claims["exp"] + 1 - time.time()
refused("expired", lambda: current.verify_token(c["token"], leeway=-late, options={"verify_iat": False}), jwt.ExpiredSignatureError)
# Retired: the key set without the old key refuses its token, and still takes the new.
refused("retired key", lambda: retired.verify_token(c["old_token"]), jwt.PyJWKClientError)
retired.verify_token(c["token"])
for name, forged in c["forged"].items():
    refused("forged: " + name, lambda: current.verify_token(forged), jwt.PyJWTError)
current.redeem_token(c["token"])
try:
    current.redeem_token(c["token"])
    raise AssertionError("redeemed twice")
except urllib.error.HTTPError as e:
    assert e.code == 409 and json.load(e)["code"] == "token_redeemed", e
print("python PyJWT: all token cases passed")
