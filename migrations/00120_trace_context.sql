-- The W3C trace context (traceparent) of the request that made a send, and of the one
-- that began a verification, so that the send's delivery receipt and the verification's
-- checks, which arrive later and perhaps at another instance, join that trace. Written
-- only for sends whose trace is recorded; NULL otherwise.

-- +goose Up
ALTER TABLE sends ADD COLUMN traceparent text;
ALTER TABLE verifications ADD COLUMN traceparent text;

-- +goose Down
ALTER TABLE verifications DROP COLUMN traceparent;
ALTER TABLE sends DROP COLUMN traceparent;
