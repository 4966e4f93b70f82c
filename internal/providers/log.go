package providers

import (
	"otpgate/internal/delivery"
	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

// logKind writes every message, of any channel, to the log instead of sending it: dev
// mode's provider, which carries every channel with nothing configured. It reads no
// variable and takes no callbacks.
func logKind() Kind {
	return Kind{Name: "log", Channels: otp.Channels(), New: newLog}
}

// newLog builds a log sender; it shows codes in dev mode only.
func newLog(s Settings, o Options) (Built, error) {
	l := sms.NewLog(o.Log.With("component", "sms", "provider", s.Name))
	l.ShowCodes = o.ShowCodes
	return Built{Provider: delivery.Provider{Sender: named{l, s.Name}}}, nil
}

// named gives a sender the name of its instance, for a log sender called otherwise.
type named struct {
	otp.Sender
	name string
}

func (n named) Name() string { return n.name }
