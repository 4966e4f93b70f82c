package pii_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"otpgate/internal/pii"
)

var secret = []byte("a test secret that is long enough for otpgate")

func key(b byte) string {
	k := make([]byte, 32)
	for i := range k {
		k[i] = b
	}
	return base64.StdEncoding.EncodeToString(k)
}

func TestSealOpen(t *testing.T) {
	k, err := pii.New(secret, "")
	if err != nil {
		t.Fatal(err)
	}
	s := k.Seal("+14155550100")
	if strings.Contains(s, "4155550100") || !strings.HasPrefix(s, pii.DerivedKeyID+".") {
		t.Fatalf("sealed %q", s)
	}
	if s == k.Seal("+14155550100") {
		t.Errorf("two seals of one address are equal: the nonce is not random")
	}
	if got, err := k.Open(s); err != nil || got != "+14155550100" {
		t.Errorf("Open = %q, %v", got, err)
	}
	if _, err := k.Open(s[:len(s)-2] + "AA"); !errors.Is(err, pii.ErrCorrupt) {
		t.Errorf("tampered value: err %v, want ErrCorrupt", err)
	}
	if k.Seal("") != "" {
		t.Errorf("empty address sealed to a value")
	}
}

func TestRotation(t *testing.T) {
	old, err := pii.New(secret, "k1:"+key(1))
	if err != nil {
		t.Fatal(err)
	}
	s := old.Seal("user@example.com")
	both, err := pii.New(secret, "k2:"+key(2)+", k1:"+key(1))
	if err != nil {
		t.Fatal(err)
	}
	if !both.Stale(s) || both.Current() != "k2" {
		t.Fatalf("Stale = %v, Current = %q", both.Stale(s), both.Current())
	}
	if got, err := both.Open(s); err != nil || got != "user@example.com" {
		t.Errorf("old value under rotated keys: %q, %v", got, err)
	}
	if both.Stale(both.Seal("x@y.z")) {
		t.Errorf("a fresh seal is stale")
	}
	onlyNew, _ := pii.New(secret, "k2:"+key(2))
	if _, err := onlyNew.Open(s); !errors.Is(err, pii.ErrUnknownKey) {
		t.Errorf("retired key: err %v, want ErrUnknownKey", err)
	}
	if old.Index("user@example.com") != onlyNew.Index("user@example.com") {
		t.Errorf("the index changed with the data key")
	}
}

func TestIndex(t *testing.T) {
	k, _ := pii.New(secret, "")
	other, _ := pii.New([]byte("another secret that is long enough!!"), "")
	a := k.Index("+14155550100")
	if a != k.Index("+14155550100") || a == k.Index("+14155550101") || a == other.Index("+14155550100") {
		t.Errorf("index not deterministic per key and address")
	}
	if !strings.HasPrefix(a, pii.IndexPrefix) || strings.Contains(a, "4155550100") {
		t.Errorf("index %q", a)
	}
}

func TestBadKeys(t *testing.T) {
	for _, spec := range []string{"k1", "k1:short", "bad id:" + key(1), "k1:" + key(1) + ",k1:" + key(2)} {
		if _, err := pii.New(secret, spec); err == nil || !strings.Contains(err.Error(), "OTP_DATA_KEYS") {
			t.Errorf("spec %q: err %v", spec, err)
		}
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"+14155550100":     "+141******00",
		"user@example.com": "u***@example.com",
		"12":               "**",
	} {
		if got := pii.Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}
