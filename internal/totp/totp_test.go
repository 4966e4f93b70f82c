package totp_test

import (
	"bytes"
	"image/png"
	"slices"
	"strings"
	"testing"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"otpgate/internal/totp"
)

// TestRFC6238Vectors holds the codes to RFC 6238's appendix B: eight digits, a 30 s step,
// each algorithm with its seed.
func TestRFC6238Vectors(t *testing.T) {
	seeds := map[totp.Algorithm][]byte{
		totp.SHA1:   []byte("12345678901234567890"),
		totp.SHA256: []byte("12345678901234567890123456789012"),
		totp.SHA512: []byte("1234567890123456789012345678901234567890123456789012345678901234"),
	}
	for _, v := range []struct {
		unix int64
		alg  totp.Algorithm
		want string
	}{
		{59, totp.SHA1, "94287082"}, {59, totp.SHA256, "46119246"}, {59, totp.SHA512, "90693936"},
		{1111111109, totp.SHA1, "07081804"}, {1111111109, totp.SHA256, "68084774"}, {1111111109, totp.SHA512, "25091201"},
		{1111111111, totp.SHA1, "14050471"}, {1111111111, totp.SHA256, "67062674"}, {1111111111, totp.SHA512, "99943326"},
		{1234567890, totp.SHA1, "89005924"}, {1234567890, totp.SHA256, "91819424"}, {1234567890, totp.SHA512, "93441116"},
		{2000000000, totp.SHA1, "69279037"}, {2000000000, totp.SHA256, "90698825"}, {2000000000, totp.SHA512, "38618901"},
		{20000000000, totp.SHA1, "65353130"}, {20000000000, totp.SHA256, "77737706"}, {20000000000, totp.SHA512, "47863826"},
	} {
		c := totp.Config{Alg: v.alg, Digits: 8, Period: 30, Skew: 0}
		at := time.Unix(v.unix, 0)
		if got := c.Code(seeds[v.alg], c.Step(at)); got != v.want {
			t.Errorf("%s at %d: got %s, want %s", v.alg, v.unix, got, v.want)
		}
		if _, ok := c.Match(seeds[v.alg], v.want, at, 0); !ok {
			t.Errorf("%s at %d: Match refused the vector's code", v.alg, v.unix)
		}
	}
	// Six digits are the last six of the eight (RFC 4226's truncation modulo 10^6).
	c := totp.Config{Alg: totp.SHA1, Digits: 6, Period: 30}
	if got := c.Code(seeds[totp.SHA1], c.Step(time.Unix(1111111109, 0))); got != "081804" {
		t.Errorf("six digits: got %s, want 081804", got)
	}
}

func TestMatchAcceptsTheSkewWindowOnly(t *testing.T) {
	secret := []byte("12345678901234567890")
	now := time.Unix(1_800_000_015, 0)
	for _, skew := range []int{0, 1, 2} {
		c := totp.Config{Alg: totp.SHA1, Digits: 6, Period: 30, Skew: skew}
		cur := c.Step(now)
		for d := int64(-3); d <= 3; d++ {
			step, ok := c.Match(secret, c.Code(secret, cur+d), now, 0)
			want := d >= -int64(skew) && d <= int64(skew)
			if ok != want || (ok && step != cur+d) {
				t.Errorf("skew %d, step %+d: got step %d ok %v, want ok %v", skew, d, step, ok, want)
			}
		}
	}
}

func TestMatchRefusesStepsAlreadyAccepted(t *testing.T) {
	secret := []byte("12345678901234567890")
	c := totp.DefaultConfig()
	now := time.Unix(1_800_000_015, 0)
	cur := c.Step(now)
	code := c.Code(secret, cur)
	if _, ok := c.Match(secret, code, now, cur); ok {
		t.Error("the code of the last accepted step matched again")
	}
	if _, ok := c.Match(secret, c.Code(secret, cur-1), now, cur); ok {
		t.Error("an older step's code matched after a newer one was accepted")
	}
	if step, ok := c.Match(secret, c.Code(secret, cur+1), now, cur); !ok || step != cur+1 {
		t.Errorf("the next step's code: got %d %v, want %d true", step, ok, cur+1)
	}
	if _, ok := c.Match(secret, code[:5], now, 0); ok {
		t.Error("a code of the wrong length matched")
	}
}

func TestConfigValidateNamesEachField(t *testing.T) {
	if err := totp.DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, c := range []struct {
		cfg   totp.Config
		field string
	}{
		{totp.Config{Alg: "md5", Digits: 6, Period: 30, Skew: 1}, "alg"},
		{totp.Config{Alg: totp.SHA1, Digits: 2, Period: 30, Skew: 1}, "digits"},
		{totp.Config{Alg: totp.SHA1, Digits: 9, Period: 30, Skew: 1}, "digits"},
		{totp.Config{Alg: totp.SHA1, Digits: 6, Period: 19, Skew: 1}, "period"},
		{totp.Config{Alg: totp.SHA1, Digits: 6, Period: 61, Skew: 1}, "period"},
		{totp.Config{Alg: totp.SHA1, Digits: 6, Period: 30, Skew: 3}, "skew"},
		{totp.Config{Alg: totp.SHA1, Digits: 6, Period: 30, Skew: -1}, "skew"},
	} {
		err := c.cfg.Validate()
		if fields := invalidFields(err); len(fields) != 1 || fields[c.field] == "" {
			t.Errorf("%+v: got %v, want a problem with %s only", c.cfg, err, c.field)
		}
	}
}

func TestSealerBindsTheSecretToItsFactor(t *testing.T) {
	s, err := totp.NewSealer([]byte("server secret"))
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("12345678901234567890")
	sealed := s.Seal("factor-1", secret)
	if got, err := s.Open("factor-1", sealed); err != nil || string(got) != string(secret) {
		t.Errorf("Open: got %q %v, want the secret", got, err)
	}
	if _, err := s.Open("factor-2", sealed); err == nil {
		t.Error("a sealed secret opened for another factor")
	}
	other, _ := totp.NewSealer([]byte("another server secret"))
	if _, err := other.Open("factor-1", sealed); err == nil {
		t.Error("a sealed secret opened with another OTP_SECRET")
	}
	if string(s.Seal("factor-1", secret)) == string(sealed) {
		t.Error("two seals of one secret are equal: the nonce is not fresh")
	}
}

func TestURIIsTheKeyURIFormat(t *testing.T) {
	c := totp.Config{Alg: totp.SHA256, Digits: 8, Period: 60, Skew: 1}
	got := totp.URI("Acme Bank", "Ana's phone", []byte("12345678901234567890"), c)
	want := "otpauth://totp/Acme%20Bank:Ana%27s%20phone?algorithm=SHA256&digits=8&issuer=Acme%20Bank&period=60&secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if b, ok := totp.DecodeSecret("gezd gnbv gy3t qojq gezd gnbv gy3t qojq"); !ok || string(b) != "12345678901234567890" {
		t.Errorf("DecodeSecret: got %q %v", b, ok)
	}
	if _, ok := totp.DecodeSecret("GEZDGNBV"); ok {
		t.Error("a 40-bit secret was accepted")
	}
}

// TestQRPNGHoldsTheURI draws a URI and reads the PNG back module by module: it shows the
// very modules of that URI's QR code (and not another string's).
func TestQRPNGHoldsTheURI(t *testing.T) {
	uri := totp.URI("Acme", "phone", []byte("12345678901234567890"), totp.DefaultConfig())
	raw, err := totp.QRPNG(uri)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != totp.QRSize || b.Dy() != totp.QRSize {
		t.Errorf("got %v, want %d px square", b, totp.QRSize)
	}
	modules := func(s string) [][]bool {
		q, err := qrcode.New(s, qrcode.Medium)
		if err != nil {
			t.Fatal(err)
		}
		return q.Bitmap()
	}
	want := modules(uri)
	n := len(want)
	// The PNG scales the bitmap to QRSize: sample each module at its centre.
	read := make([][]bool, n)
	for y := range n {
		read[y] = make([]bool, n)
		for x := range n {
			r, _, _, _ := img.At((2*x+1)*totp.QRSize/(2*n), (2*y+1)*totp.QRSize/(2*n)).RGBA()
			read[y][x] = r < 0x8000
		}
	}
	same := func(a, b [][]bool) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if !slices.Equal(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	if !same(read, want) {
		t.Error("the PNG does not show the URI's QR code")
	}
	if same(read, modules(strings.Replace(uri, "Acme", "Acmf", 1))) {
		t.Error("the PNG also reads as another URI's code: the comparison proves nothing")
	}
}
