package sms_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

func TestLogSend(t *testing.T) {
	t.Run("WritesOneLineWithToIDAndBody", func(t *testing.T) {
		var buf bytes.Buffer
		s := sms.NewLog(slog.New(slog.NewJSONHandler(&buf, nil)))
		s.ShowCodes = true
		m := message()
		id, err := s.Send(context.Background(), m)
		if err != nil || id != "" {
			t.Fatalf("Send: got %q, %v, want \"\", nil", id, err)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 1 {
			t.Fatalf("got %d lines, want 1: %s", len(lines), buf.String())
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
			t.Fatalf("decode %s: %v", lines[0], err)
		}
		for k, want := range map[string]string{"to": m.To, "id": m.ID, "body": m.Body, "locale": m.Locale} {
			if rec[k] != want {
				t.Errorf("%s: got %v, want %q", k, rec[k], want)
			}
		}
	})

	t.Run("MasksTheCodeUnlessShowCodes", func(t *testing.T) {
		for _, m := range []otp.Message{
			message(),
			{ID: "v2", To: "+819012345678", Locale: "ja", Body: "認証コード: ４８３９２０\n5分以内に入力してください。"},
		} {
			var buf bytes.Buffer
			if _, err := sms.NewLog(slog.New(slog.NewJSONHandler(&buf, nil))).Send(context.Background(), m); err != nil {
				t.Fatalf("Send: got %v, want nil", err)
			}
			var rec struct{ Body string }
			if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
				t.Fatalf("decode %s: %v", buf.Bytes(), err)
			}
			want := strings.NewReplacer(code, "******", "４８３９２０", "******").Replace(m.Body)
			if rec.Body != want {
				t.Errorf("body: got %q, want %q", rec.Body, want)
			}
		}
	})

	t.Run("MasksEveryDigitOfACall", func(t *testing.T) {
		var buf bytes.Buffer
		m := otp.Message{ID: "v3", Channel: otp.ChannelVoice, To: "+819012345678", Locale: "en",
			Body: "Your verification code is: 4, 8, 3, 9, 2, 0. Once again: 4, 8, 3, 9, 2, 0."}
		if _, err := sms.NewLog(slog.New(slog.NewJSONHandler(&buf, nil))).Send(context.Background(), m); err != nil {
			t.Fatalf("Send: got %v, want nil", err)
		}
		var rec struct{ Body, Channel string }
		if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
			t.Fatalf("decode %s: %v", buf.Bytes(), err)
		}
		want := "Your verification code is: *, *, *, *, *, *. Once again: *, *, *, *, *, *."
		if rec.Body != want || rec.Channel != "voice" {
			t.Errorf("got %q on %q, want %q on voice", rec.Body, rec.Channel, want)
		}
	})

	t.Run("DoneContextIsDefiniteAndSilent", func(t *testing.T) {
		var buf bytes.Buffer
		s := sms.NewLog(slog.New(slog.NewJSONHandler(&buf, nil)))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := s.Send(ctx, message())
		if !errors.Is(err, otp.ErrNotDelivered) || buf.Len() != 0 {
			t.Errorf("got %v and %q logged, want ErrNotDelivered and nothing logged", err, buf.String())
		}
	})

	t.Run("NameIsLog", func(t *testing.T) {
		if got := sms.NewLog(slog.New(slog.DiscardHandler)).Name(); got != "log" {
			t.Errorf("got %q, want log", got)
		}
	})
}

// The senders satisfy the domain's interface.
var (
	_ otp.Sender = (*sms.Log)(nil)
	_ otp.Sender = (*sms.Webhook)(nil)
	_ otp.Sender = (*sms.Twilio)(nil)
)
