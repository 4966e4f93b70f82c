package message_test

import (
	"strings"
	"testing"
	"time"

	"otpgate/internal/message"
	"otpgate/internal/otp"
	"otpgate/internal/templates"
)

func TestPayment(t *testing.T) {
	c := catalog(t)
	const amount, payee = "€39.99", "Acme Öl GmbH"

	t.Run("EveryLocaleAndChannelNamesTheAmountAndPayee", func(t *testing.T) {
		for _, l := range locales {
			for _, ch := range otp.Channels() {
				out := render(t, c, otp.MessageParams{Channel: ch, Locale: l, Code: "483920", TTL: 5 * time.Minute, Amount: amount, Payee: payee})
				for _, part := range []string{out.Body, out.HTML} {
					if part == "" {
						continue
					}
					if !strings.Contains(part, amount) || !strings.Contains(part, payee) {
						t.Errorf("%s/%s: got %q, want %q and %q in it", l, ch, part, amount, payee)
					}
				}
			}
		}
	})

	t.Run("WithoutATransactionTheMessageIsUnchanged", func(t *testing.T) {
		out := render(t, c, otp.MessageParams{Channel: otp.ChannelSMS, Locale: "en", Code: "483920", TTL: 5 * time.Minute})
		if strings.Contains(out.Body, "Payment") {
			t.Errorf("got %q, want no payment sentence", out.Body)
		}
	})

	t.Run("ThePaymentComesBeforeTheWebOTPLine", func(t *testing.T) {
		out := render(t, c, otp.MessageParams{Channel: otp.ChannelSMS, Locale: "en", Code: "483920", TTL: 5 * time.Minute,
			Amount: amount, Payee: payee, WebOTPDomain: "shop.example.com"})
		lines := strings.Split(out.Body, "\n")
		if got, want := lines[len(lines)-1], "@shop.example.com #483920"; got != want {
			t.Errorf("last line: got %q, want %q", got, want)
		}
		if got, want := lines[len(lines)-2], "Payment of €39.99 to Acme Öl GmbH."; got != want {
			t.Errorf("payment line: got %q, want %q", got, want)
		}
	})

	t.Run("AnAppTemplateThatNamesThePaymentIsNotRepeated", func(t *testing.T) {
		own := templates.Message{SMS: "Pay {{.Amount}} to {{.Payee}} with {{.Code}}"}
		out := render(t, c, otp.MessageParams{Channel: otp.ChannelSMS, Locale: "en", Code: "483920", TTL: 5 * time.Minute,
			Amount: amount, Payee: payee, Templates: own})
		if got, want := out.Body, "Pay €39.99 to Acme Öl GmbH with 483920"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		other := templates.Message{SMS: "Code {{.Code}}"}
		out = render(t, c, otp.MessageParams{Channel: otp.ChannelSMS, Locale: "en", Code: "483920", TTL: 5 * time.Minute,
			Amount: amount, Payee: payee, Templates: other})
		if got, want := out.Body, "Code 483920\nPayment of €39.99 to Acme Öl GmbH."; got != want {
			t.Errorf("an app template without the payment: got %q, want %q", got, want)
		}
	})

	t.Run("AppTemplatesMayNameAmountAndPayee", func(t *testing.T) {
		if _, err := message.New(map[string]message.Templates{"en": {SMS: "{{.Code}} for {{.Amount}} to {{.Payee}}"}}); err != nil {
			t.Errorf("got %v, want the template accepted", err)
		}
	})
}
