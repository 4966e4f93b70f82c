package sms_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

const webhookSecret = "whsec-test-9c1f0e7d"

func newWebhook(t *testing.T, url string, timeout time.Duration) *sms.Webhook {
	t.Helper()
	w, err := sms.NewWebhook(sms.WebhookConfig{URL: url, Secret: webhookSecret, Timeout: timeout})
	if err != nil {
		t.Fatalf("NewWebhook: %v", err)
	}
	return w
}

func TestWebhookSend(t *testing.T) {
	t.Run("PostsExactlyTheSignedJSON", func(t *testing.T) {
		srv, got := provider(t, http.StatusOK, "", "")
		w := newWebhook(t, srv.URL+"/hooks/sms?tenant=a", 0)
		if _, err := w.Send(context.Background(), message()); err != nil {
			t.Fatalf("Send: got %v, want nil", err)
		}
		r := one(t, got)
		if r.Method != http.MethodPost || r.Path != "/hooks/sms" || r.Query != "tenant=a" {
			t.Errorf("request: got %s %s?%s, want POST /hooks/sms?tenant=a", r.Method, r.Path, r.Query)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type: got %q, want application/json", ct)
		}
		if err := sms.VerifySignature(webhookSecret, r.Header.Get(sms.SignatureHeader), r.Body, time.Now(), time.Minute); err != nil {
			t.Errorf("VerifySignature of what the receiver got: got %v, want nil", err)
		}
		want := `{"id":"0190f3a2-7c1e-7b4a-9d2e-5f6a7b8c9d0e","to":"+819012345678",` +
			`"body":"Your code is 483920. It expires in 5 minutes.","locale":"en","created_at":"2026-03-14T06:09:26Z"}`
		if string(r.Body) != want {
			t.Errorf("body: got %s, want %s", r.Body, want)
		}
	})

	t.Run("SignatureIsHMACOfTimestampDotBody", func(t *testing.T) {
		srv, got := provider(t, http.StatusOK, "", "")
		w := newWebhook(t, srv.URL, 0)
		w.Now = func() time.Time { return time.Unix(1773468566, 0) }
		if _, err := w.Send(context.Background(), message()); err != nil {
			t.Fatalf("Send: got %v, want nil", err)
		}
		r := one(t, got)
		h := hmac.New(sha256.New, []byte(webhookSecret))
		h.Write([]byte("1773468566."))
		h.Write(r.Body)
		want := "t=1773468566,v1=" + hex.EncodeToString(h.Sum(nil))
		if sig := r.Header.Get(sms.SignatureHeader); sig != want {
			t.Errorf("signature: got %q, want %q", sig, want)
		}
	})

	t.Run("KeepsTheReplyID", func(t *testing.T) {
		srv, _ := provider(t, http.StatusAccepted, "application/json", `{"id":"msg-42","status":"queued"}`)
		id, err := newWebhook(t, srv.URL, 0).Send(context.Background(), message())
		if err != nil || id != "msg-42" {
			t.Errorf("Send: got %q, %v, want msg-42, nil", id, err)
		}
	})

	t.Run("AnyTwoXXWithoutIDIsDelivered", func(t *testing.T) {
		for _, tc := range []struct {
			status int
			reply  string
		}{
			{http.StatusOK, ""},
			{http.StatusNoContent, ""},
			{http.StatusAccepted, "ok, thanks"},
			{http.StatusCreated, `{"id":42}`},
			{299, `{"id":"cut`},
		} {
			srv, got := provider(t, tc.status, "", tc.reply)
			id, err := newWebhook(t, srv.URL, 0).Send(context.Background(), message())
			if err != nil || id != "" {
				t.Errorf("status %d reply %q: got %q, %v, want \"\", nil", tc.status, tc.reply, id, err)
			}
			one(t, got)
		}
	})

	t.Run("ClientErrorIsDefinite", func(t *testing.T) {
		for _, status := range []int{400, 401, 404, 409, 422, 429} {
			srv, _ := provider(t, status, "text/plain", "number\nblocked by policy")
			_, err := newWebhook(t, srv.URL, 0).Send(context.Background(), message())
			if !errors.Is(err, otp.ErrNotDelivered) {
				t.Errorf("status %d: got %v, want an error wrapping ErrNotDelivered", status, err)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, fmt.Sprint(status)) || !strings.Contains(msg, "number blocked by policy") {
				t.Errorf("status %d: got %q, want the status and the reply in it", status, msg)
			}
		}
	})

	t.Run("ServerErrorIsUnknown", func(t *testing.T) {
		for _, status := range []int{500, 502, 503, 504} {
			srv, _ := provider(t, status, "", "upstream down")
			_, err := newWebhook(t, srv.URL, 0).Send(context.Background(), message())
			if err == nil || errors.Is(err, otp.ErrNotDelivered) {
				t.Errorf("status %d: got %v, want an error not wrapping ErrNotDelivered", status, err)
			}
		}
	})

	t.Run("RedirectIsNotFollowed", func(t *testing.T) {
		target, got := provider(t, http.StatusOK, "", "")
		srv := serve(t, http.RedirectHandler(target.URL, http.StatusFound).ServeHTTP)
		_, err := newWebhook(t, srv.URL, 0).Send(context.Background(), message())
		if !errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want an error wrapping ErrNotDelivered", err)
		}
		if len(got) != 0 {
			t.Errorf("redirect target got %d requests, want 0", len(got))
		}
	})

	t.Run("TimeoutIsUnknown", func(t *testing.T) {
		srv, release := stalling(t)
		_, err := newWebhook(t, srv.URL, time.Hour).Send(shortCtx(t), message())
		release()
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want the ctx deadline and not ErrNotDelivered", err)
		}
	})

	t.Run("ClientTimeoutIsABackstop", func(t *testing.T) {
		srv, release := stalling(t)
		_, err := newWebhook(t, srv.URL, 100*time.Millisecond).Send(context.Background(), message())
		release()
		if err == nil || errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want an error not wrapping ErrNotDelivered", err)
		}
	})

	t.Run("RefusedConnectionIsDefinite", func(t *testing.T) {
		_, err := newWebhook(t, refusedURL(t), 0).Send(context.Background(), message())
		if !errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want an error wrapping ErrNotDelivered", err)
		}
	})

	t.Run("ErrorsNeverQuoteTheCodeOrSecret", func(t *testing.T) {
		echo := serve(t, func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "rejected %s with %s", r.Header.Get(sms.SignatureHeader), body)
		})
		_, err := newWebhook(t, echo.URL, 0).Send(context.Background(), message())
		if err == nil || strings.Contains(err.Error(), code) || strings.Contains(err.Error(), webhookSecret) {
			t.Errorf("got %v, want an error without the code and the secret", err)
		}
	})

	t.Run("HugeReplyIsCutShort", func(t *testing.T) {
		srv, _ := provider(t, http.StatusBadRequest, "", strings.Repeat("x", 1<<20))
		_, err := newWebhook(t, srv.URL, 0).Send(context.Background(), message())
		if err == nil || len(err.Error()) > 400 {
			t.Errorf("got an error of %d bytes, want one of at most 400", len(fmt.Sprint(err)))
		}
	})
}

func TestNewWebhook(t *testing.T) {
	for name, cfg := range map[string]sms.WebhookConfig{
		"NoURL":              {Secret: "s"},
		"RelativeURL":        {URL: "/sms", Secret: "s"},
		"OtherScheme":        {URL: "ftp://example.com/sms", Secret: "s"},
		"NoSecret":           {URL: "https://example.com/sms"},
		"UnparsableURL":      {URL: "http://[::1", Secret: "s"},
		"BadURLWithPassword": {URL: "https://user:pw@[bad", Secret: "s"},
	} {
		t.Run("Rejects"+name, func(t *testing.T) {
			w, err := sms.NewWebhook(cfg)
			if err == nil {
				t.Fatalf("got %v, nil, want an error", w)
			}
			if strings.Contains(err.Error(), "pw") {
				t.Errorf("error %q shows the URL's password", err)
			}
		})
	}
	t.Run("NameIsWebhook", func(t *testing.T) {
		if got := newWebhook(t, "https://example.com/sms", 0).Name(); got != "webhook" {
			t.Errorf("got %q, want webhook", got)
		}
	})
}

func TestWebhookConfigHidesSecret(t *testing.T) {
	cfg := sms.WebhookConfig{URL: "https://example.com/sms?key=qk-77", Secret: webhookSecret}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "sms", cfg)
	for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), cfg.String(), buf.String()} {
		if strings.Contains(out, webhookSecret) || strings.Contains(out, "qk-77") {
			t.Errorf("got %q, want no secret and no query", out)
		}
	}
}
