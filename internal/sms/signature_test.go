package sms_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"otpgate/internal/sms"
)

func TestVerifySignature(t *testing.T) {
	now := time.Unix(1773468566, 0)
	body := []byte(`{"id":"v1","to":"+819012345678","body":"Your code is 483920."}`)
	good := sms.Sign(webhookSecret, now, body)
	sig := good[strings.Index(good, "v1="):]
	ts := "t=" + strconv.FormatInt(now.Unix(), 10)

	t.Run("AcceptsAFreshSignature", func(t *testing.T) {
		if err := sms.VerifySignature(webhookSecret, good, body, now.Add(30*time.Second), time.Minute); err != nil {
			t.Errorf("got %v, want nil", err)
		}
	})

	t.Run("AcceptsSpacesOtherKeysAndASecondV1", func(t *testing.T) {
		h := " v0=ab , " + ts + " ,v1=" + strings.Repeat("0", 64) + ", " + sig
		if err := sms.VerifySignature(webhookSecret, h, body, now, time.Minute); err != nil {
			t.Errorf("got %v, want nil", err)
		}
	})

	t.Run("RejectsATamperedBody", func(t *testing.T) {
		tampered := []byte(strings.Replace(string(body), "+8190", "+8170", 1))
		if err := sms.VerifySignature(webhookSecret, good, tampered, now, time.Minute); !errors.Is(err, sms.ErrSignatureMismatch) {
			t.Errorf("got %v, want ErrSignatureMismatch", err)
		}
	})

	t.Run("RejectsAWrongSecret", func(t *testing.T) {
		if err := sms.VerifySignature("other-secret", good, body, now, time.Minute); !errors.Is(err, sms.ErrSignatureMismatch) {
			t.Errorf("got %v, want ErrSignatureMismatch", err)
		}
	})

	t.Run("RejectsAMovedTimestamp", func(t *testing.T) {
		h := "t=" + strconv.FormatInt(now.Unix()+1, 10) + "," + sig
		if err := sms.VerifySignature(webhookSecret, h, body, now, time.Minute); !errors.Is(err, sms.ErrSignatureMismatch) {
			t.Errorf("got %v, want ErrSignatureMismatch", err)
		}
	})

	t.Run("RejectsStaleAndFutureTimestamps", func(t *testing.T) {
		for _, at := range []time.Time{now.Add(-sms.DefaultTolerance - time.Second), now.Add(sms.DefaultTolerance + time.Second)} {
			h := sms.Sign(webhookSecret, at, body)
			if err := sms.VerifySignature(webhookSecret, h, body, now, sms.DefaultTolerance); !errors.Is(err, sms.ErrSignatureExpired) {
				t.Errorf("signed %s from now: got %v, want ErrSignatureExpired", at.Sub(now), err)
			}
		}
	})

	t.Run("AcceptsTheToleranceEdge", func(t *testing.T) {
		h := sms.Sign(webhookSecret, now.Add(-time.Minute), body)
		if err := sms.VerifySignature(webhookSecret, h, body, now, time.Minute); err != nil {
			t.Errorf("got %v, want nil", err)
		}
	})

	t.Run("RejectsMalformedHeaders", func(t *testing.T) {
		for _, h := range []string{
			"",
			",",
			ts,
			sig,
			ts + "," + sig + ",garbage",
			ts + "," + ts + "," + sig,
			"t=," + sig,
			"t=-5," + sig,
			"t=+5," + sig,
			"t=1e9," + sig,
			"t=99999999999999999999," + sig,
			ts + ",v1=",
			ts + ",v1=xyz",
			ts + ",v1=" + strings.Repeat("a", 63),
			ts + ",v1=" + strings.Repeat("a", 66),
			ts + ";" + sig,
			"T=" + ts[2:] + "," + sig,
			ts + "," + sig + "," + strings.Repeat("x=1,", 300),
		} {
			if err := sms.VerifySignature(webhookSecret, h, body, now, time.Minute); !errors.Is(err, sms.ErrSignatureMalformed) {
				t.Errorf("header %.80q: got %v, want ErrSignatureMalformed", h, err)
			}
		}
	})

	t.Run("RefusesAnEmptySecretOrTolerance", func(t *testing.T) {
		if err := sms.VerifySignature("", sms.Sign("", now, body), body, now, time.Minute); err == nil {
			t.Error("empty secret: got nil, want an error")
		}
		if err := sms.VerifySignature(webhookSecret, good, body, now, 0); err == nil {
			t.Error("zero tolerance: got nil, want an error")
		}
	})
}

func FuzzVerifySignature(f *testing.F) {
	now := time.Unix(1773468566, 0)
	body := []byte(`{"id":"v1"}`)
	f.Add(sms.Sign(webhookSecret, now, body), body)
	f.Add("t=1773468566,v1="+strings.Repeat("0", 64), []byte("x"))
	f.Add("t=1,v1=zz,v1=", []byte{})
	f.Add(" , = ,t==,v1==", []byte("{}"))
	f.Add("t=9223372036854775807,v1="+strings.Repeat("f", 64), body)
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		if sms.VerifySignature(webhookSecret, header, body, now, time.Minute) == nil && !carriesTrueMAC(header, body, now) {
			t.Fatalf("header %q passed without the true HMAC of body %q", header, body)
		}
		if err := sms.VerifySignature(webhookSecret, sms.Sign(webhookSecret, now, body), body, now, time.Minute); err != nil {
			t.Fatalf("round trip of body %q: got %v, want nil", body, err)
		}
	})
}

// carriesTrueMAC reports whether header holds the real v1 for body at some second
// within a minute of now: the only way a header may pass.
func carriesTrueMAC(header string, body []byte, now time.Time) bool {
	for d := -60; d <= 60; d++ {
		sig := sms.Sign(webhookSecret, now.Add(time.Duration(d)*time.Second), body)
		if strings.Contains(header, sig[strings.Index(sig, "v1="):]) {
			return true
		}
	}
	return false
}
