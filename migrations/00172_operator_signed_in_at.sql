-- When an account last signed in with single sign-on: a role that came from the identity
-- provider's claims is only as fresh as that, so personal tokens of such an account work
-- for OTP_OIDC_RECHECK after it. Accounts whose role came from the claims start from the
-- upgrade's time, so their tokens keep working that long without a sign-in.

-- +goose Up
ALTER TABLE operators ADD COLUMN signed_in_at timestamptz;

UPDATE operators SET signed_in_at = now() WHERE subject IS NOT NULL AND NOT role_from_console;

-- +goose Down
ALTER TABLE operators DROP COLUMN signed_in_at;
