package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"otpgate/api"
	otphttp "otpgate/internal/http"
	"otpgate/internal/metrics"
	"otpgate/internal/otp"
	"otpgate/internal/providers"
	"otpgate/internal/receipt"
)

// sources records the sources of the callbacks it receives.
type sources struct{ got []string }

func (s *sources) Receive(_ context.Context, source string, _ receipt.Callback) error {
	s.got = append(s.got, source)
	return nil
}

// TestDeliveryProviderTable holds the wiring to the registry of provider kinds: one
// instance of every kind, set up with its settings' examples, is built, and the receipt
// readers, the public receipt route and the API document all agree with the table.
func TestDeliveryProviderTable(t *testing.T) {
	env := map[string]string{"OTP_PUBLIC_URL": "https://otp.example.com"}
	var names, takers []string
	for _, k := range providers.Kinds() {
		names = append(names, k.Name)
		for _, v := range k.Settings {
			if v.Example != "" {
				env[v.Name] = v.Example
			}
		}
		if k.Receipts {
			takers = append(takers, k.Name)
		}
	}
	env["SMS_PROVIDERS"] = strings.Join(names, ",")

	t.Run("ReceiptReadersComeFromTheTable", func(t *testing.T) {
		cfg, err := loadFrom(env)
		if err != nil {
			t.Fatal(err)
		}
		d, err := newDelivery(cfg, slog.New(slog.DiscardHandler), metrics.New(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for k := range d.readers {
			got = append(got, k)
		}
		for _, k := range takers {
			want = append(want, k+"/"+k)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("readers: got %v, want %v", got, want)
		}
		if got := d.router.Channels(); !slices.Equal(got, otp.Channels()) {
			t.Errorf("channels: got %v, want every one", got)
		}
	})

	t.Run("ThePublicRouteTakesTheKindsThatTakeReceipts", func(t *testing.T) {
		for _, k := range providers.Kinds() {
			rec := &sources{}
			h := otphttp.NewServer(otphttp.Deps{Receipts: rec})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/receipts/"+k.Name+"/alt", strings.NewReader("{}")))
			reached := slices.Equal(rec.got, []string{k.Name + "/alt"})
			if reached != k.Receipts || (k.Receipts && w.Code != http.StatusNoContent) || (!k.Receipts && w.Code != http.StatusNotFound) {
				t.Errorf("%s: got %d, receiver called with %v; want the route to take it: %v", k.Name, w.Code, rec.got, k.Receipts)
			}
		}
	})

	t.Run("TheAPIDocumentListsThem", func(t *testing.T) {
		raw, err := api.PublicJSON()
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Paths map[string]struct {
				Post struct {
					Parameters []struct {
						Name   string `json:"name"`
						Schema struct {
							Enum []string `json:"enum"`
						} `json:"schema"`
					} `json:"parameters"`
				} `json:"post"`
			} `json:"paths"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, p := range doc.Paths["/v1/receipts/{kind}/{instance}"].Post.Parameters {
			if p.Name == "kind" {
				kinds = slices.Sorted(slices.Values(p.Schema.Enum))
			}
		}
		if want := slices.Sorted(slices.Values(takers)); !slices.Equal(kinds, want) {
			t.Errorf("{kind}: got %v, want %v", kinds, want)
		}
	})
}
