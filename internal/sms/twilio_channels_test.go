package sms_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

func fakeTwilio(t *testing.T, edit func(*sms.TwilioConfig)) (*smstest.Twilio, *sms.Twilio) {
	t.Helper()
	f := smstest.NewTwilio(t, twilioSID, twilioToken)
	return f, newTwilio(t, f.URL, func(c *sms.TwilioConfig) {
		c.WhatsAppFrom, c.StatusCallback = "+15005550006", "https://otp.example.com/v1/receipts/twilio/twilio"
		if edit != nil {
			edit(c)
		}
	})
}

func TestTwilioWhatsApp(t *testing.T) {
	m := message()
	m.Channel, m.Code = otp.ChannelWhatsApp, code

	t.Run("SendsTheContentTemplateWithTheCode", func(t *testing.T) {
		f, s := fakeTwilio(t, func(c *sms.TwilioConfig) { c.WhatsAppContentSID = "HX0123456789abcdef0123456789abcdef" })
		id, err := s.Send(context.Background(), m)
		got := f.Received()
		if err != nil || len(got) != 1 || id != got[0].SID {
			t.Fatalf("Send: got %q, %v and %d requests, want the message SID of one", id, err, len(got))
		}
		r := got[0]
		if r.Channel != "whatsapp" || r.To != m.To || r.From != "+15005550006" || r.ContentSID != "HX0123456789abcdef0123456789abcdef" ||
			r.Code != code || r.Body != "" || r.StatusCallback != "https://otp.example.com/v1/receipts/twilio/twilio" {
			t.Errorf("got %+v, want a whatsapp: message with the template, the code as variable 1 and the status callback", r)
		}
	})

	t.Run("WithoutATemplateSendsTheText", func(t *testing.T) {
		f, s := fakeTwilio(t, nil)
		if _, err := s.Send(context.Background(), m); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if r := f.Received()[0]; r.Channel != "whatsapp" || r.Body != m.Body || r.Code != code {
			t.Errorf("got %+v, want the rendered text as Body", r)
		}
	})

	t.Run("UnconfiguredIsDefiniteAndSendsNothing", func(t *testing.T) {
		f, s := fakeTwilio(t, func(c *sms.TwilioConfig) { c.WhatsAppFrom = "" })
		if _, err := s.Send(context.Background(), m); !errors.Is(err, otp.ErrNotDelivered) || len(f.Received()) != 0 {
			t.Errorf("got %v, want ErrNotDelivered and no request", err)
		}
		if got := strings.Join(s.Channels(), ","); got != "sms,voice" {
			t.Errorf("channels: got %s, want sms,voice", got)
		}
	})
}

func TestTwilioVoice(t *testing.T) {
	m := message()
	m.Channel, m.Code, m.Locale = otp.ChannelVoice, code, "ja"
	m.Body = "認証コードをお知らせします。4、8、3、9、2、0。繰り返します。4、8、3、9、2、0。"

	t.Run("CallsWithTwiMLInTheLocalesVoice", func(t *testing.T) {
		f, s := fakeTwilio(t, nil)
		id, err := s.Send(context.Background(), m)
		if err != nil || !strings.HasPrefix(id, "CA") {
			t.Fatalf("Send: got %q, %v, want a call SID", id, err)
		}
		r := f.Received()[0]
		if r.Channel != "voice" || r.To != m.To || r.From != "+15005550006" || r.Language != "ja-JP" || r.Voice != "Polly.Mizuki" ||
			r.Body != m.Body || r.Code != code || r.StatusCallback == "" {
			t.Errorf("got %+v, want a call from TWILIO_FROM reading the digits in Japanese", r)
		}
	})

	t.Run("VoiceFromWinsAndAlphanumericFromCannotCall", func(t *testing.T) {
		f, s := fakeTwilio(t, func(c *sms.TwilioConfig) { c.VoiceFrom = "+15005550001" })
		if _, err := s.Send(context.Background(), m); err != nil || f.Received()[0].From != "+15005550001" {
			t.Errorf("got %v, want a call from TWILIO_VOICE_FROM", err)
		}
		_, s = fakeTwilio(t, func(c *sms.TwilioConfig) { c.From = "Example" })
		if _, err := s.Send(context.Background(), m); !errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("alphanumeric From: got %v, want ErrNotDelivered", err)
		}
	})

	t.Run("TwiMLEscapesTheText", func(t *testing.T) {
		got := sms.TwiML("xx", `Tom & "Jerry" <3`)
		want := `<Say language="en-US" voice="Polly.Joanna">Tom &amp; &#34;Jerry&#34; &lt;3</Say>`
		if !strings.Contains(got, want) || !strings.HasPrefix(got, "<?xml") {
			t.Errorf("got %s, want it to contain %s", got, want)
		}
	})

	t.Run("ProviderErrorIsDefiniteAndCarriesNoCode", func(t *testing.T) {
		f, s := fakeTwilio(t, nil)
		f.Set(smstest.Reply{Status: 400})
		_, err := s.Send(context.Background(), m)
		if !errors.Is(err, otp.ErrNotDelivered) || strings.Contains(err.Error(), code) {
			t.Errorf("got %v, want a definite error without the code", err)
		}
	})
}
