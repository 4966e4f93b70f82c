"""Twilio's Python helper library against otpgate: every flow and error of the
conformance test (cmd/server/twilio_clients_test.go starts the server and sets the
environment). Prints one "ok" line per assertion; exits 1 at the first failure."""

import base64
import hashlib
import hmac
import json
import os
import re
import struct
import sys
import time
import urllib.parse
import urllib.request

import twilio
from twilio.base.exceptions import TwilioException, TwilioRestException
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client

BASE = os.environ["OTPGATE_BASE"]
P1, P2, P3, P4 = os.environ["OTPGATE_PHONES"].split(",")
SERVICE = os.environ["OTPGATE_SERVICE_SID"]


class OtpgateHttpClient(TwilioHttpClient):
    """The library's supported hook: an HTTP client of our own that sends every
    request to otpgate's public listener instead of Twilio's host."""

    def request(self, method, url, *args, **kwargs):
        return super().request(method, re.sub(r"^https://[^/]+", BASE, url), *args, **kwargs)


def new_client(secret):
    return Client(os.environ["OTPGATE_KEY_ID"], secret, http_client=OtpgateHttpClient())


client = new_client(os.environ["OTPGATE_SECRET"])


def service(sid=SERVICE):
    return client.verify.v2.services(sid)


def code_for(to):
    url = os.environ["OTPGATE_CODE_URL"] + "?to=" + urllib.parse.quote(to)
    with urllib.request.urlopen(url) as r:
        return r.read().decode().strip()


def want(name, cond, got):
    if not cond:
        print(f"FAIL {name}: got {got!r}", file=sys.stderr)
        sys.exit(1)
    print(f"ok {name}")


def want_error(name, code, status, fn):
    try:
        got = fn()
    except TwilioRestException as e:
        want(f"{name}: TwilioRestException {code}", e.code == code and e.status == status,
             {"code": e.code, "status": e.status, "msg": e.msg})
        return
    except Exception as e:  # any other type is a failure too
        want(f"{name}: TwilioRestException {code}", False, repr(e))
    want(name, False, got)


def want_list_error(name, code, status, fn):
    """This version of the library reports a list page's error as a TwilioException that
    quotes the status and the body; the other calls raise TwilioRestException."""
    try:
        got = fn()
    except TwilioRestException as e:
        want(f"{name}: TwilioRestException {code}", e.code == code and e.status == status, {"code": e.code, "status": e.status})
        return
    except TwilioException as e:
        text = str(e)
        want(f"{name}: TwilioException {code}", f"HTTP {status}" in text and f'"code":{code}' in text, text)
        return
    want(name, False, got)


v = service().verifications.create(to=P1, channel="sms")
want("create: pending", v.status == "pending" and v.to == P1 and v.channel == "sms"
     and re.fullmatch(r"VE[0-9a-f]{32}", v.sid) and v.service_sid == SERVICE and v.valid is False
     and v.date_created is not None and isinstance(v.send_code_attempts, list), v.__dict__)
code = code_for(P1)
wrong = "111111" if code == "000000" else "000000"

c = service().verification_checks.create(to=P1, code=wrong)
want("check wrong code: pending, not valid", c.status == "pending" and c.valid is False, c.__dict__)
c = service().verification_checks.create(to=P1, code=code)
want("check right code: approved", c.status == "approved" and c.valid is True and c.sid == v.sid, c.__dict__)

f = service().verifications(v.sid).fetch()
want("fetch: approved", f.sid == v.sid and f.status == "approved" and f.to == P1, f.__dict__)

other = service().verifications.create(to=P2, channel="sms")
canceled = service().verifications(other.sid).update(status="canceled")
want("cancel: canceled", canceled.status == "canceled" and canceled.sid == other.sid, canceled.__dict__)

want_error("unknown service", 20404, 404,
           lambda: service("VA" + "f" * 32).verifications.create(to=P3, channel="sms"))
want_error("wrong secret", 20003, 401,
           lambda: new_client(os.environ["OTPGATE_SECRET"][:-4] + "0000").verify.v2.services(SERVICE)
           .verifications.create(to=P3, channel="sms"))
want_error("bad To", 60200, 400, lambda: service().verifications.create(to="+1", channel="sms"))

for i in range(1, 6):
    s = service().verifications.create(to=P3, channel="sms")
    want(f"send {i} of 5: pending", s.status == "pending", s.__dict__)
want_error("sixth send", 60203, 429, lambda: service().verifications.create(to=P3, channel="sms"))

service().verifications.create(to=P4, channel="sms")
right = code_for(P4)
bad = "111111" if right == "000000" else "000000"
for i in range(1, 6):
    k = service().verification_checks.create(to=P4, code=bad)
    want(f"wrong check {i} of 5: not valid", k.valid is False, k.__dict__)
want_error("sixth wrong check", 60202, 429, lambda: service().verification_checks.create(to=P4, code=bad))
# The Services resource with the account credential (any account SID, OTP_ACCOUNT_TOKEN).
account = Client(os.environ["OTPGATE_ACCOUNT_SID"], os.environ["OTPGATE_ACCOUNT_TOKEN"], http_client=OtpgateHttpClient())
created = account.verify.v2.services.create(friendly_name="Python conformance", code_length=7)
want("service create", re.fullmatch(r"VA[0-9a-f]{32}", created.sid) and created.friendly_name == "Python conformance"
     and created.code_length == 7 and created.lookup_enabled is False, created.__dict__)
fetched = account.verify.v2.services(created.sid).fetch()
want("service fetch", fetched.sid == created.sid and fetched.code_length == 7, fetched.__dict__)
updated = account.verify.v2.services(created.sid).update(code_length=8)
want("service update", updated.code_length == 8 and updated.friendly_name == "Python conformance", updated.__dict__)
listed = [s.sid for s in account.verify.v2.services.list(page_size=1)]
want("service list, one per page", created.sid in listed and SERVICE in listed and len(listed) == len(set(listed)), listed)
want_error("service LookupEnabled=true", 60200, 400,
           lambda: account.verify.v2.services.create(friendly_name="x", lookup_enabled=True))
want_error("service create with an app key", 20003, 401, lambda: client.verify.v2.services.create(friendly_name="x"))
want("service delete", account.verify.v2.services(created.sid).delete() is True, created.sid)
want_error("service fetch after delete", 20404, 404, lambda: account.verify.v2.services(created.sid).fetch())
# Verification Attempts of a new service: three verifications, one approved.
M1, M2, M3, M4 = os.environ["OTPGATE_MORE_PHONES"].split(",")
attempts_svc = account.verify.v2.services.create(friendly_name="Python attempts")
sent = [account.verify.v2.services(attempts_svc.sid).verifications.create(to=to, channel="sms").sid for to in (M1, M2, M3)]
account.verify.v2.services(attempts_svc.sid).verification_checks.create(to=M2, code=code_for(M2))
listed = account.verify.v2.verification_attempts.list(verify_service_sid=attempts_svc.sid, page_size=1)
want("attempts, one per page, newest first", [a.verification_sid for a in listed] == sent[::-1]
     and all(re.fullmatch(r"VL[0-9a-f]{32}", a.sid) and a.channel == "sms" for a in listed), [a.__dict__ for a in listed])
conv = account.verify.v2.verification_attempts.list(verify_service_sid=attempts_svc.sid, status="converted")
want("converted attempts", [a.verification_sid for a in conv] == [sent[1]], [a.__dict__ for a in conv])
one = account.verify.v2.verification_attempts(listed[0].sid).fetch()
want("attempt fetch", one.sid == listed[0].sid and one.conversion_status == "unconverted", one.__dict__)
want_list_error("attempts Channel=fax", 60200, 400, lambda: account.verify.v2.verification_attempts.list(channel="fax"))
want_list_error("another service's attempts with a key", 20404, 404,
           lambda: client.verify.v2.verification_attempts.list(verify_service_sid=attempts_svc.sid))
templates = account.verify.v2.templates.list(friendly_name="built-in")
want("templates", [t.sid for t in templates] == ["HJ00000000000000000000000000000000"] and "en" in templates[0].translations,
     [t.__dict__ for t in templates])
# TOTP: an entity, a factor verified with a first code, challenges approved once per code.
# The codes are made here with the standard library (RFC 6238), not by otpgate.


def totp_code(secret_b32, at, step=30, digits=6):
    key = base64.b32decode(secret_b32 + "=" * (-len(secret_b32) % 8))
    mac = hmac.new(key, struct.pack(">Q", int(at) // step), hashlib.sha1).digest()
    off = mac[-1] & 0x0F
    return str((struct.unpack(">I", mac[off:off + 4])[0] & 0x7FFFFFFF) % 10 ** digits).zfill(digits)


identity = "py-" + P1.lstrip("+")
entity = service().entities.create(identity=identity)
want("entity create", re.fullmatch(r"YE[0-9a-f]{32}", entity.sid) and entity.identity == identity, entity.__dict__)
factor = service().entities(identity).new_factors.create(friendly_name="Python phone", factor_type="totp")
want("factor create: unverified, with its binding", factor.status == "unverified" and factor.factor_type == "totp"
     and factor.binding["uri"].startswith("otpauth://totp/") and len(factor.binding["secret"]) == 32, factor.__dict__)
want_error("challenge of an unverified factor", 60318, 403,
           lambda: service().entities(identity).challenges.create(factor_sid=factor.sid, auth_payload="123456"))
now = time.time()
code = totp_code(factor.binding["secret"], now)
verified = service().entities(identity).factors(factor.sid).update(auth_payload=code)
want("factor verified by the first code", verified.status == "verified", verified.__dict__)
replay = service().entities(identity).challenges.create(factor_sid=factor.sid, auth_payload=code)
want("the same code again: denied", replay.status == "denied", replay.__dict__)
nxt = totp_code(factor.binding["secret"], now + 30)
ok = service().entities(identity).challenges.create(factor_sid=factor.sid, auth_payload=nxt)
want("the next code: approved", ok.status == "approved" and ok.factor_sid == factor.sid, ok.__dict__)
want("challenge fetch", service().entities(identity).challenges(ok.sid).fetch().status == "approved", ok.sid)
approved = service().entities(identity).challenges.list(factor_sid=factor.sid, status="approved")
want("challenge list, approved", [c.sid for c in approved] == [ok.sid], [c.__dict__ for c in approved])
want("factor list", [f.sid for f in service().entities(identity).factors.list()] == [factor.sid], factor.sid)
want_error("FactorType=push", 60200, 400,
           lambda: service().entities(identity).new_factors.create(friendly_name="x", factor_type="push"))
want("factor delete", service().entities(identity).factors(factor.sid).delete() is True, factor.sid)
want("entity delete", service().entities(identity).delete() is True, identity)
want_error("entity fetch after delete", 20404, 404, lambda: service().entities(identity).fetch())
# PSD2: a service with psd2_enabled binds each code to its amount and payee.
X1, X2, X3, X4, X5 = os.environ["OTPGATE_EXTRA_PHONES"].split(",")
psd2 = account.verify.v2.services.create(friendly_name="Python PSD2", psd2_enabled=True)
want("psd2 service", psd2.psd2_enabled is True, psd2.__dict__)
pv = account.verify.v2.services(psd2.sid).verifications.create(to=X1, channel="sms", amount="€39.99", payee="Acme Inc.")
want("psd2 create shows amount and payee", pv.amount == "€39.99" and pv.payee == "Acme Inc.", pv.__dict__)
pcode = code_for(X1)
other = account.verify.v2.services(psd2.sid).verification_checks.create(to=X1, code=pcode, amount="€399.9", payee="Acme Inc.")
want("psd2 check, another amount: pending", other.status == "pending" and other.valid is False, other.__dict__)
same = account.verify.v2.services(psd2.sid).verification_checks.create(to=X1, code=pcode, amount="€39.99", payee="Acme Inc.")
want("psd2 check, same amount and payee: approved", same.status == "approved" and same.valid is True, same.__dict__)
want_error("psd2 create without amount", 60200, 400,
           lambda: account.verify.v2.services(psd2.sid).verifications.create(to=X2, channel="sms"))
want_error("amount on a service without psd2", 60200, 400,
           lambda: service().verifications.create(to=X2, channel="sms", amount="€1", payee="Acme"))
# Rate Limits and Buckets: a bucket of max 2 on end_user_id.
rl = account.verify.v2.services(psd2.sid).rate_limits.create(unique_name="end_user_id", description="per user")
want("rate limit create", re.fullmatch(r"RK[0-9a-f]{32}", rl.sid) and rl.unique_name == "end_user_id", rl.__dict__)
want("rate limit update", account.verify.v2.services(psd2.sid).rate_limits(rl.sid).update(description="x").description == "x", rl.sid)
want("rate limit list", [r.sid for r in account.verify.v2.services(psd2.sid).rate_limits.list()] == [rl.sid], rl.sid)
bucket = account.verify.v2.services(psd2.sid).rate_limits(rl.sid).buckets.create(max=2, interval=60)
want("bucket create", re.fullmatch(r"BL[0-9a-f]{32}", bucket.sid) and bucket.max == 2 and bucket.interval == 60, bucket.__dict__)
fetched_b = account.verify.v2.services(psd2.sid).rate_limits(rl.sid).buckets(bucket.sid).fetch()
want("bucket fetch", fetched_b.sid == bucket.sid and fetched_b.max == 2, fetched_b.__dict__)
want_error("bucket max 0", 60200, 400, lambda: account.verify.v2.services(psd2.sid).rate_limits(rl.sid).buckets.create(max=0, interval=60))
keyed = lambda to, user: account.verify.v2.services(psd2.sid).verifications.create(
    to=to, channel="sms", amount="€1", payee="Acme", rate_limits={"end_user_id": user})
keyed(X2, "u1")
keyed(X3, "u1")
want_error("third send of one value over a bucket of 2", 20429, 429, lambda: keyed(X4, "u1"))
want("another value has its own bucket", keyed(X5, "u2").status == "pending", X5)
want_error("rate limits naming none of the service's", 60200, 400,
           lambda: account.verify.v2.services(psd2.sid).verifications.create(to=X4, channel="sms", amount="€1", payee="Acme", rate_limits={"nope": "x"}))
want("bucket delete", account.verify.v2.services(psd2.sid).rate_limits(rl.sid).buckets(bucket.sid).delete() is True, bucket.sid)
want("rate limit delete", account.verify.v2.services(psd2.sid).rate_limits(rl.sid).delete() is True, rl.sid)
want_error("rate limit fetch after delete", 20404, 404, lambda: account.verify.v2.services(psd2.sid).rate_limits(rl.sid).fetch())
print(f"twilio-python {twilio.__version__}: all flows passed")
