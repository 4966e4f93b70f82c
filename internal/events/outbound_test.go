package events_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/testenv/fixture"
)

// oneApp finds the default app and nothing else.
type oneApp struct{}

func (oneApp) GetApp(_ context.Context, id string) (apps.Info, error) {
	if id != otp.DefaultAppID {
		return apps.Info{}, otp.ErrNotFound
	}
	return apps.Info{App: otp.App{ID: otp.DefaultAppID}}, nil
}

func TestEndpointsReachOnlyAllowedAddresses(t *testing.T) {
	t.Run("SpecialAddressesAreRefusedAtRegistration", func(t *testing.T) {
		store := inmem.New()
		admin := events.NewAdmin(store, oneApp{}, newSealer(t), events.Options{})
		for _, u := range []string{
			"http://127.0.0.1:8081/admin/api/apps", "http://[::1]/", "http://[::ffff:127.0.0.1]/",
			"http://169.254.169.254/latest/meta-data/", "http://10.0.0.5/hook", "http://0.0.0.0:8080/",
			"http://100.100.100.200/", "https://[fd00::1]/", "http://127.1/",
		} {
			_, _, err := admin.AddWebhook(t.Context(), otp.DefaultAppID, events.EndpointInput{URL: u, Types: events.Types()}, "test")
			var invalid *otp.ErrInvalidRequest
			if !errors.As(err, &invalid) || invalid.Fields["url"] == "" {
				t.Errorf("%s: got %v, want invalid_request naming url", u, err)
			}
		}
		if eps, err := store.Endpoints(t.Context(), otp.DefaultAppID); err != nil || len(eps) != 0 {
			t.Errorf("stored %d endpoints, %v; want none", len(eps), err)
		}
	})

	t.Run("PublicAndAllowListedAddressesAreTaken", func(t *testing.T) {
		admin := events.NewAdmin(inmem.New(), oneApp{}, newSealer(t), fastOptions())
		for _, u := range []string{"https://93.184.216.34/hook", "http://127.0.0.1:9/hook"} {
			if _, _, err := admin.AddWebhook(t.Context(), otp.DefaultAppID, events.EndpointInput{URL: u, Types: events.Types()}, "test"); err != nil {
				t.Errorf("%s: %v", u, err)
			}
		}
	})

	t.Run("TheDispatcherDoesNotConnectToThem", func(t *testing.T) {
		// An endpoint stored before the policy, or whose name now resolves to loopback.
		store, sealer := inmem.New(), newSealer(t)
		rc := &receiver{t: t, seen: map[string]bool{}}
		srv := httptest.NewServer(rc)
		t.Cleanup(srv.Close)
		ep := addEndpoint(t, store, sealer, srv.URL)
		verify(t, store, "+15550100005")
		opts := fastOptions()
		opts.Outbound = events.Options{}.Outbound
		d := events.NewDispatcher(store, sealer, slog.New(slog.DiscardHandler), opts)
		run(t, d)
		fixture.Eventually(t, "retries", 10*time.Second, func() bool { return d.Retried() >= 3 })
		rc.mu.Lock()
		hits := rc.hits
		rc.mu.Unlock()
		if hits != 0 {
			t.Errorf("receiver got %d requests, want none", hits)
		}
		ds, err := store.Deliveries(t.Context(), otp.DefaultAppID, ep, events.DeliveryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		tried := 0
		for _, x := range ds {
			if x.Attempts == 0 {
				continue // held behind the verification's first event
			}
			tried++
			if x.Status != events.Pending || !strings.Contains(x.LastError, "loopback") {
				t.Errorf("%s: got %s %q, want pending, refused as loopback", x.Event.Type, x.Status, x.LastError)
			}
		}
		if tried == 0 {
			t.Error("no delivery was tried")
		}
	})
}
