package otp

import (
	"context"
	"errors"
	"strings"

	"otpgate/internal/psd2"
	"otpgate/internal/rate"
)

// channelCarrier is a Sender that says which channels it carries; a Sender that is
// not one carries SMS alone.
type channelCarrier interface {
	// Channels lists the channels at least one of its providers carries.
	Channels() []string
}

// carriedChannels are the channels s carries.
func carriedChannels(s Sender) []string {
	if c, ok := s.(channelCarrier); ok {
		return c.Channels()
	}
	return []string{ChannelSMS}
}

// compose renders the message for a target with the app's templates and SMS options,
// naming the payment the code confirms when there is one (PSD2).
// The app is named by the caller's friendly name when one was given, else by its name,
// except for the default app, whose messages name none.
func (s *Service) compose(app App, t target, code, friendlyName string, tx psd2.Transaction) (Message, error) {
	name := strings.TrimSpace(friendlyName)
	if name == "" && !app.Default {
		name = app.Name
	}
	c, err := s.renderer.Render(MessageParams{
		Channel: t.channel, Locale: t.locale, Code: code, App: name, TTL: app.CodeTTL,
		WebOTPDomain: app.WebOTPDomain, AppHash: app.AndroidAppHash, Templates: app.TemplatesFor(t.locale),
		Amount: tx.Amount, Payee: tx.Payee,
	})
	if err != nil {
		return Message{}, err
	}
	return Message{
		Channel: t.channel, To: t.address, Country: t.region, Locale: t.locale, Code: code,
		Body: c.Body, Subject: c.Subject, HTML: c.HTML, Encoding: c.Encoding, Segments: c.Segments,
	}, nil
}

// deliver hands an accepted send's message to its providers and records how that went,
// with every provider attempt. When no attempt can have delivered it, the reservation
// is refunded and the send given back; when one may have, nothing is refunded and the
// verification stays pending, so that a message that does arrive still works. ctx must
// not end with the client's request.
func (s *Service) deliver(ctx context.Context, m Message, start SendStart, r rate.Reservation) error {
	sctx, cancel := context.WithTimeout(ctx, s.cfg.SMSTimeout)
	d, err := Deliver(sctx, s.sender, m)
	cancel()
	provider := d.Provider
	if provider == "" {
		provider = s.sender.Name()
	}
	f := FinishSend{
		SendID: m.ID, VerificationID: start.Verification.ID, Status: SendSent,
		Provider: provider, ProviderID: d.ProviderID, Attempts: d.Attempts, Now: s.Now(), SendAt: m.CreatedAt,
	}
	if err == nil {
		s.finish(ctx, f)
		return nil
	}
	definite := errors.Is(err, ErrNotDelivered)
	f.Status, f.Error, f.Undo, f.Created, f.ProviderID = SendFailed, err.Error(), definite, start.Created, ""
	s.finish(ctx, f)
	if definite {
		s.refund(ctx, r)
	}
	return &ErrProvider{Provider: provider, Definite: definite, Err: err}
}
