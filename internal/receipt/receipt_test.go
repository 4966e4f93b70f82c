package receipt

import (
	"context"
	"errors"
	"testing"
	"time"

	"otpgate/internal/otp"
)

// readerFunc is a Reader that reads what it is told.
type readerFunc func(Callback, time.Time) (Receipt, bool, error)

func (f readerFunc) ReadReceipt(c Callback, now time.Time) (Receipt, bool, error) { return f(c, now) }

// countingReceipts is a Store that counts its calls.
type countingReceipts struct{ calls int }

func (s *countingReceipts) MarkDelivery(context.Context, Receipt) (Marked, error) {
	s.calls++
	return Marked{Settled: true}, nil
}

func TestReceiveRefusesInvalidTextBeforeTheStore(t *testing.T) {
	for name, r := range map[string]Receipt{
		"NULInProviderID":         {Provider: "tw", ProviderID: "SM1\x00", Status: DeliveryDelivered},
		"InvalidUTF8InSendID":     {Provider: "tw", SendID: "\xff", Status: DeliveryDelivered},
		"NULInTheProvidersReason": {Provider: "tw", ProviderID: "SM1", Status: DeliveryUndelivered, Error: "\x00"},
	} {
		t.Run(name, func(t *testing.T) {
			store := &countingReceipts{}
			rs := New(store, map[string]Reader{"twilio/tw": readerFunc(func(Callback, time.Time) (Receipt, bool, error) {
				return r, true, nil
			})})
			err := rs.Receive(t.Context(), "twilio/tw", Callback{})
			var bad *otp.ErrInvalidText
			if !errors.As(err, &bad) || otp.ErrorCode(err) != otp.CodeInvalidRequest || store.calls != 0 {
				t.Errorf("got %v and %d store calls, want *ErrInvalidText and none", err, store.calls)
			}
		})
	}
}
