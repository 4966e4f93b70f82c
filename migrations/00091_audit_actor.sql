-- Who made each admin change (operator, personal token, break-glass, app key or the
-- system), from which address, and what changed before and after. The audit log is
-- never purged by retention.

-- +goose Up
ALTER TABLE admin_actions
    ADD COLUMN actor_kind text NOT NULL DEFAULT '',
    ADD COLUMN actor      text NOT NULL DEFAULT '',
    ADD COLUMN actor_id   text NOT NULL DEFAULT '',
    ADD COLUMN token_id   text NOT NULL DEFAULT '',
    ADD COLUMN client_ip  text NOT NULL DEFAULT '',
    ADD COLUMN before     text NOT NULL DEFAULT '',
    ADD COLUMN after      text NOT NULL DEFAULT '';

CREATE INDEX admin_actions_actor_idx ON admin_actions (actor, created_at DESC, id DESC);
CREATE INDEX admin_actions_action_idx ON admin_actions (action, created_at DESC, id DESC);

-- +goose Down
DROP INDEX admin_actions_action_idx;
DROP INDEX admin_actions_actor_idx;
ALTER TABLE admin_actions DROP COLUMN after, DROP COLUMN before, DROP COLUMN client_ip,
    DROP COLUMN token_id, DROP COLUMN actor_id, DROP COLUMN actor, DROP COLUMN actor_kind;
