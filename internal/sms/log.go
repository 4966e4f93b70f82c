package sms

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"unicode/utf8"

	"otpgate/internal/otp"
)

// anyDigit finds every digit.
var anyDigit = regexp.MustCompile(`\p{Nd}`)

// Log is the dev-mode sender: it writes each message, of any channel, to the log instead
// of sending it.
type Log struct {
	log *slog.Logger

	// ShowCodes logs the body as it is, code included. Set it in dev mode only:
	// anyone who can read the log can then pass any verification. Unset, every run
	// of four or more digits in the body (codes are 4–10 digits) is masked.
	ShowCodes bool
}

// NewLog returns a sender that logs every message instead of sending it. It is for
// dev mode and for trying otpgate out; no SMS ever leaves. Codes appear in the log
// only when ShowCodes is set, which the wiring (internal/server) does in dev mode alone.
func NewLog(log *slog.Logger) *Log {
	return &Log{log: log}
}

// Name is "log".
func (l *Log) Name() string { return "log" }

// Send writes one line with the message's channel, id, recipient and body (for email,
// the plain part). It fails, with
// otp.ErrNotDelivered, only when ctx is already done.
func (l *Log) Send(ctx context.Context, m otp.Message) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("log: %w: %w", otp.ErrNotDelivered, err)
	}
	body := m.Body
	if !l.ShowCodes {
		masked := digitRun
		if otp.ChannelOf(m) == otp.ChannelVoice {
			masked = anyDigit // a call spells the code out digit by digit
		}
		body = masked.ReplaceAllStringFunc(body, func(run string) string {
			return strings.Repeat("*", utf8.RuneCountInString(run))
		})
	}
	// "sms not sent: log sender", "email not sent: …": one line per message, every channel.
	l.log.LogAttrs(ctx, slog.LevelInfo, otp.ChannelOf(m)+" not sent: log sender",
		slog.String("channel", otp.ChannelOf(m)),
		slog.String("to", m.To),
		slog.String("id", m.ID),
		slog.String("locale", m.Locale),
		slog.String("body", body),
	)
	return "", nil
}
