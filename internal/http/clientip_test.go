package http

import (
	"net/netip"
	"testing"
)

func TestClientIPIsWhatTheServicesSee(t *testing.T) {
	v := &stubVerifier{}
	h, _ := newTestServer(t, v, func(d *Deps) { d.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")} })
	// httptest requests come from 192.0.2.1, here a trusted proxy.
	w := post(t, h, "/v1/verifications", `{"phone":"+819012345678"}`, map[string]string{
		"X-Forwarded-For": "6.6.6.6, 198.51.100.1", "User-Agent": "app/1.0",
	})
	if w.Code != 201 {
		t.Fatalf("status: got %v, want %v", w.Code, 201)
	}
	calls := v.sendCalls()
	if len(calls) != 1 {
		t.Fatalf("sends: got %v, want %v", len(calls), 1)
	}
	if calls[0].ClientIP != "198.51.100.1" {
		t.Errorf("client ip: got %v, want %v", calls[0].ClientIP, "198.51.100.1")
	}
	if calls[0].Fingerprint != "app/1.0" {
		t.Errorf("fingerprint: got %v, want %v", calls[0].Fingerprint, "app/1.0")
	}
}
