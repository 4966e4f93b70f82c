package otp

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

type plainSender struct{ err error }

func (p plainSender) Name() string { return "webhook" }
func (p plainSender) Send(context.Context, Message) (string, error) {
	if p.err != nil {
		return "", p.err
	}
	return "msg-1", nil
}

type chainSender struct{ plainSender }

func (chainSender) Deliver(context.Context, Message) (Delivery, error) {
	return Delivery{Provider: "b", ProviderID: "id-b", Attempts: []ProviderAttempt{{Provider: "a", Outcome: ProviderFailed}, {Provider: "b", Outcome: ProviderSent}}}, nil
}

func TestDeliver(t *testing.T) {
	t.Run("APlainSenderMakesOneAttempt", func(t *testing.T) {
		for _, tc := range []struct {
			err  error
			want ProviderOutcome
		}{
			{nil, ProviderSent},
			{fmt.Errorf("status 400: %w", ErrNotDelivered), ProviderFailed},
			{errors.New("status 503"), ProviderUnknown},
		} {
			d, err := Deliver(context.Background(), plainSender{tc.err}, Message{})
			if err != tc.err || len(d.Attempts) != 1 || d.Attempts[0].Outcome != tc.want || d.Provider != "webhook" {
				t.Errorf("error %v: got %+v, %v, want one %s attempt by webhook", tc.err, d, err, tc.want)
			}
			if (tc.err == nil) != (d.ProviderID == "msg-1") || (tc.err != nil) != (d.Attempts[0].Error != "") {
				t.Errorf("error %v: got id %q and attempt error %q", tc.err, d.ProviderID, d.Attempts[0].Error)
			}
		}
	})

	t.Run("ADelivererReportsItsOwnAttempts", func(t *testing.T) {
		d, err := Deliver(context.Background(), chainSender{}, Message{})
		if err != nil || len(d.Attempts) != 2 || d.ProviderID != "id-b" {
			t.Errorf("got %+v, %v, want the deliverer's two attempts", d, err)
		}
	})

	t.Run("AMessageWithoutChannelIsAnSMS", func(t *testing.T) {
		if got := ChannelOf(Message{}); got != ChannelSMS {
			t.Errorf("got %q, want sms", got)
		}
		if got := ChannelOf(Message{Channel: ChannelEmail}); got != ChannelEmail {
			t.Errorf("got %q, want email", got)
		}
	})
}
