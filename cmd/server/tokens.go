package main

import (
	"context"
	"log/slog"

	"otpgate/internal/tokens"
)

// newTokens is the verification token service: over the keys of OTP_TOKEN_KEYS, or over
// keys it generates, stores sealed and rotates (the ring's loop keeps them current).
func newTokens(ctx context.Context, cfg config, p *parts, log *slog.Logger) (*tokens.Service, *tokens.Ring, error) {
	var ring *tokens.Ring
	var err error
	if len(cfg.tokenKeys) > 0 {
		ring, err = tokens.NewStaticRing(cfg.tokenKeys)
	} else {
		var sealer *tokens.Sealer
		if sealer, err = tokens.NewSealer(p.secret); err != nil {
			return nil, nil, err
		}
		ring, err = tokens.NewRing(p.store, sealer, cfg.TokenAlg, cfg.TokenKeyRotation, log.With("component", "tokens"))
	}
	if err != nil {
		return nil, nil, err
	}
	mctx, cancel := context.WithTimeout(ctx, cfg.DBTimeout)
	defer cancel()
	if err := ring.Maintain(mctx); err != nil {
		return nil, nil, err
	}
	return tokens.NewService(ring, p.store, cfg.tokenIssuer(), p.dataKeys.Index), ring, nil
}
