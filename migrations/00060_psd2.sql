-- PSD2 dynamic linking: an app may bind every code to the payment it confirms (Twilio's
-- Psd2Enabled); a verification keeps the amount and payee of its latest send, as the
-- Twilio API shows them. The codes' hashes themselves cover the amount and payee of their
-- own send, so what these columns hold is for display, never for the check.

-- +goose Up
ALTER TABLE apps ADD COLUMN psd2_enabled boolean NOT NULL DEFAULT false;
ALTER TABLE verifications
    ADD COLUMN amount text,
    ADD COLUMN payee  text;

-- +goose Down
ALTER TABLE verifications DROP COLUMN payee, DROP COLUMN amount;
ALTER TABLE apps DROP COLUMN psd2_enabled;
