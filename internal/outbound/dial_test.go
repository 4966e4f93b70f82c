package outbound_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"otpgate/internal/outbound"
)

// server counts the requests it gets.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestClient(t *testing.T) {
	srv, hits := server(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]

	t.Run("LoopbackIsRefusedByDefault", func(t *testing.T) {
		before := hits.Load()
		_, err := outbound.Policy{}.Client().Get(srv.URL)
		var refused *outbound.RefusedError
		if !errors.As(err, &refused) || refused.Kind != "loopback" || hits.Load() != before {
			t.Errorf("got %v and %d requests, want refused as loopback and none", err, hits.Load()-before)
		}
	})

	t.Run("TheAddressDialedIsChecked", func(t *testing.T) {
		// A name is checked again where it resolves when dialed, whatever the check at
		// registration saw (DNS rebinding): the dialer's hook sees the resolved address.
		p := outbound.Policy{Resolver: fakeResolver{netip.MustParseAddr("93.184.216.34")}}
		before := hits.Load()
		_, err := p.Client().Get("http://localhost" + port + "/")
		var refused *outbound.RefusedError
		if !errors.As(err, &refused) || refused.Kind != "loopback" || hits.Load() != before {
			t.Errorf("got %v and %d requests, want refused as loopback and none", err, hits.Load()-before)
		}
	})

	t.Run("AllowListedLoopbackIsReached", func(t *testing.T) {
		resp, err := outbound.New(outbound.Loopback()).Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("got %d, want 204", resp.StatusCode)
		}
	})

	t.Run("RedirectsAreNotFollowed", func(t *testing.T) {
		target, targetHits := server(t, func(w http.ResponseWriter, r *http.Request) {})
		redirect, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusFound)
		})
		resp, err := outbound.New(outbound.Loopback()).Client().Get(redirect.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound || targetHits.Load() != 0 {
			t.Errorf("got %d and %d requests to the target, want the 302 and none", resp.StatusCode, targetHits.Load())
		}
	})

	t.Run("ProxiesAreNotUsed", func(t *testing.T) {
		// A proxy would be the address dialed, hiding the request's own from the check.
		if tr := outbound.New(outbound.Loopback()).Transport(); tr.Proxy != nil {
			t.Error("the transport takes a proxy, want none")
		}
	})
}
