package otp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// finishTimeout bounds the history writes and refunds that follow a send; they run
// detached from the request so a client hanging up cannot lose what was accepted.
const finishTimeout = 5 * time.Second

// Send sends a fresh code for the phone: a new verification, or a resend of its
// pending one. Bad input is refused before anything is spent; once the limiter
// admits the send, every path either sends the SMS or refunds the reservation,
// except a provider timeout, whose outcome is unknown.
func (s *Service) Send(ctx context.Context, in SendInput) (SendResult, error) {
	var res SendResult
	app := s.appOf(in.App)
	channel, locale, err := sendInput(in, app)
	if err != nil {
		return res, err
	}
	phone, region, err := s.normalizePhone(in.Phone)
	if err != nil {
		return res, err
	}
	if !app.AllowsCountry(region) {
		return res, &ErrCountryNotAllowed{Country: region}
	}
	target, fraudLimits, err := s.screen(app.ID, phone, region, in.ClientIP)
	if err != nil {
		return res, err
	}

	lctx, cancel := Bounded(ctx, s.cfg.LimiterTimeout)
	dec, err := s.limiter.Allow(lctx, append(appSendPolicy(app, phone, s.sendPolicy(phone, in.ClientIP, in.Fingerprint)), fraudLimits...))
	cancel()
	if err != nil {
		return res, fmt.Errorf("otp: send: limiter: %w", err)
	}
	res.Decision = dec
	now := s.Now()
	s.startedBlocks(ctx, target, dec, now)
	if !dec.Allowed {
		return res, s.denied(app.ID, phone, in.ClientIP, dec, now)
	}

	code, err := newCode(s.Rand, app.CodeLength)
	if err != nil {
		s.refund(ctx, dec.Reservation)
		return res, err
	}
	sendID := s.NewID()
	bctx, cancel := Bounded(ctx, s.cfg.StoreTimeout)
	start, err := s.store.BeginSend(bctx, BeginSend{
		AppID: app.ID, Phone: phone, Channel: channel, Locale: locale, ClientIP: in.ClientIP,
		Provider: s.sender.Name(), Now: now, TTL: app.CodeTTL,
		MaxSends: app.MaxSends, MaxAttempts: app.MaxAttempts,
		NewVerificationID: s.NewID(), SendID: sendID,
		CodeHash: func(id string) []byte { return hashCode(s.cfg.Secret, id, code) },
		Shadow:   dec.ShadowReport(),
	})
	cancel()
	if err != nil {
		s.refund(ctx, dec.Reservation)
		var budget *ErrSendBudget
		if errors.As(err, &budget) {
			limited := budgetSpent(budget, app.CodeTTL, now, dec)
			res.Decision = limited.Decision
			return res, limited
		}
		return res, fmt.Errorf("otp: send: begin: %w", err)
	}

	// From here on the send is accepted: a client that hangs up must not cancel the
	// SMS halfway or leave its history row unwritten.
	detached := context.WithoutCancel(ctx)
	sctx, cancel := context.WithTimeout(detached, s.cfg.SMSTimeout)
	providerID, sendErr := s.sender.Send(sctx, Message{
		ID: sendID, To: phone, Body: appMessage(app, in.FriendlyName, renderMessage(locale, code, app.CodeTTL)),
		Locale: locale, CreatedAt: now,
	})
	cancel()
	if sendErr != nil {
		definite := errors.Is(sendErr, ErrNotDelivered)
		s.finish(detached, FinishSend{
			SendID: sendID, VerificationID: start.Verification.ID, Status: SendFailed,
			Error: sendErr.Error(), Undo: definite, Created: start.Created, Now: s.Now(),
		})
		if definite {
			s.refund(detached, dec.Reservation)
		}
		return res, &ErrProvider{Provider: s.sender.Name(), Definite: definite, Err: sendErr}
	}
	s.finish(detached, FinishSend{
		SendID: sendID, VerificationID: start.Verification.ID, Status: SendSent,
		ProviderID: providerID, Now: s.Now(),
	})

	res.Verification = start.Verification
	res.Created = start.Created
	res.SendsLeft = max(app.MaxSends-start.Verification.Sends, 0)
	res.NextResendAt = now.Add(dec.RetryAfterNext())
	return res, nil
}

// SendLimitState reports the client IP's send limit without recording anything,
// for rate-limit headers on requests refused before they reached the limiter.
func (s *Service) SendLimitState(ctx context.Context, clientIP string) (Decision, error) {
	if len(s.cfg.IPRules) == 0 {
		return Decision{Allowed: true}, nil
	}
	ctx, cancel := Bounded(ctx, s.cfg.LimiterTimeout)
	defer cancel()
	states, err := s.limiter.Inspect(ctx, Limit{Scope: ScopeIP, Key: clientIP, Rules: s.cfg.IPRules})
	if err != nil {
		return Decision{}, fmt.Errorf("otp: send limit state: %w", err)
	}
	return Decision{Allowed: true, Rules: states}, nil
}

// sendInput refuses malformed sends before anything is spent, listing every bad
// field, and fills in the defaults of channel and locale.
func sendInput(in SendInput, app App) (channel, locale string, err error) {
	channel, locale = in.Channel, in.Locale
	if channel == "" {
		channel = "sms"
	}
	if locale == "" {
		locale = "en"
	}
	fields := map[string]string{}
	if strings.TrimSpace(in.Phone) == "" {
		fields["phone"] = "is required"
	}
	if !app.AcceptsChannel(channel) {
		fields["channel"] = "must be " + quoteOr(app.acceptedChannels())
	}
	if !app.AcceptsLocale(locale) {
		fields["locale"] = "must be " + quoteOr(app.acceptedLocales())
	}
	if len(fields) > 0 {
		return "", "", &ErrInvalidRequest{Fields: fields}
	}
	return channel, locale, nil
}

// denied records a refused send for history and names the refusal: by the fraud guard's
// block when one refused it (a blocked target answers as such, whatever else refused), else
// by its first violated rule. The duplicate limit comes first in sendPolicy and violations
// keep policy order, so a double submit is reported as such even when other rules refused
// it too.
func (s *Service) denied(appID, phone, ip string, dec Decision, now time.Time) error {
	status, reason := SendBlocked, ""
	blocked, fraudErr := fraudDenied(dec)
	if violations := dec.Violations(); len(violations) > 0 && fraudErr == nil {
		first := violations[0]
		if first.Scope == ScopeDuplicate {
			status = SendDuplicate
		}
		reason = first.Scope + " " + first.Rule.String()
	}
	if fraudErr != nil {
		reason = blocked
	}
	if s.history != nil {
		s.history.RecordDenied(DeniedSend{
			ID: s.NewID(), AppID: appID, Phone: phone, ClientIP: ip, Status: status, Reason: reason,
			Shadow: dec.ShadowReport(), Time: now,
		})
	}
	switch {
	case fraudErr != nil:
		return fraudErr
	case status == SendDuplicate:
		return ErrDuplicateSubmit
	}
	return &ErrRateLimited{Decision: dec}
}

// budgetSpent turns a verification's spent send budget into a rate-limit refusal: it
// frees up when the verification expires and a new one can be created. Its decision is
// the limiter's, refused by the budget as one more rule, so the rate-limit headers show it.
func budgetSpent(b *ErrSendBudget, ttl time.Duration, now time.Time, dec Decision) *ErrRateLimited {
	v := RuleState{
		Scope: ScopeVerification, Rule: Rule{Limit: b.MaxSends, Window: ttl},
		Used: b.MaxSends, RetryAfter: max(b.ExpiresAt.Sub(now), 0), Violated: true,
	}
	v.ResetAfter = v.RetryAfter
	dec.Allowed = false
	dec.Reservation = Reservation{}
	dec.Rules = append(append([]RuleState(nil), dec.Rules...), v)
	return &ErrRateLimited{Decision: dec}
}

// refund gives back a reservation for a send that definitely did not happen. A
// failed refund only over-counts, so it is logged, not returned.
func (s *Service) refund(ctx context.Context, r Reservation) {
	ctx, cancel := Bounded(context.WithoutCancel(ctx), max(s.cfg.LimiterTimeout, finishTimeout))
	defer cancel()
	if err := s.limiter.Refund(ctx, r); err != nil {
		s.log.Warn("limiter refund failed", "err", err)
	}
}

// finish writes how a send ended. The SMS is already out (or definitely not), so a
// failed write is logged rather than turned into an error the client would retry.
func (s *Service) finish(ctx context.Context, p FinishSend) {
	ctx, cancel := context.WithTimeout(ctx, finishTimeout)
	defer cancel()
	if err := s.store.FinishSend(ctx, p); err != nil {
		s.log.Error("recording send outcome failed", "send_id", p.SendID, "status", p.Status, "err", err)
	}
}
