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

// batchFunc is a BatchReader that reads what it is told.
type batchFunc func(Callback, time.Time) ([]Receipt, error)

func (f batchFunc) ReadReceipt(Callback, time.Time) (Receipt, bool, error) {
	panic("Receive must read a BatchReader's callbacks with ReadReceipts")
}
func (f batchFunc) ReadReceipts(c Callback, now time.Time) ([]Receipt, error) { return f(c, now) }

func TestReceiveRecordsEveryReceiptOfABatch(t *testing.T) {
	ok := Receipt{Provider: "ib", ProviderID: "m1", Status: DeliveryDelivered}
	t.Run("EachIsRecorded", func(t *testing.T) {
		store := &countingReceipts{}
		rs := New(store, map[string]Reader{"infobip/ib": batchFunc(func(Callback, time.Time) ([]Receipt, error) {
			second := ok
			second.ProviderID = "m2"
			return []Receipt{ok, second}, nil
		})})
		if err := rs.Receive(t.Context(), "infobip/ib", Callback{}); err != nil || store.calls != 2 {
			t.Errorf("got %v and %d store calls, want nil and 2", err, store.calls)
		}
	})
	t.Run("OneWithInvalidTextRecordsNone", func(t *testing.T) {
		store := &countingReceipts{}
		rs := New(store, map[string]Reader{"infobip/ib": batchFunc(func(Callback, time.Time) ([]Receipt, error) {
			return []Receipt{ok, {Provider: "ib", ProviderID: "m2\x00", Status: DeliveryDelivered}}, nil
		})})
		var bad *otp.ErrInvalidText
		if err := rs.Receive(t.Context(), "infobip/ib", Callback{}); !errors.As(err, &bad) || store.calls != 0 {
			t.Errorf("got %v and %d store calls, want *ErrInvalidText and none", err, store.calls)
		}
	})
	t.Run("AnErrorRecordsNone", func(t *testing.T) {
		store := &countingReceipts{}
		rs := New(store, map[string]Reader{"infobip/ib": batchFunc(func(Callback, time.Time) ([]Receipt, error) {
			return nil, ErrBadSignature
		})})
		if err := rs.Receive(t.Context(), "infobip/ib", Callback{}); !errors.Is(err, ErrBadSignature) || store.calls != 0 {
			t.Errorf("got %v and %d store calls, want ErrBadSignature and none", err, store.calls)
		}
	})
}
