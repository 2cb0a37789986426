-- Webhook secrets sealed at rest (issue 11): AES-256-GCM under a key the database does not hold (SECRETS_KEY, or
-- the embedded DATA_DIR/secrets.key), as `v1:<key id>:<iv>:<ciphertext and tag>` (src/secrets/secret-box.ts).
-- SQL cannot seal (it has no key), so this only makes room: the start after it (src/webhooks/secret-sealing.ts)
-- moves each plain secret into its sealed column and empties the plain one, in batches, before serving.

ALTER TABLE webhooks
  ADD COLUMN secret_sealed text,
  -- The secret before the last rotation, sealed; it signs while previous_secret_expires_at is ahead.
  ADD COLUMN previous_secret_sealed text,
  ALTER COLUMN secret DROP NOT NULL;

-- A secret in exactly one form: plain (until the start seals it) or sealed. Sealed text always says its version and
-- key id, so a plain secret written into a sealed column by mistake is refused.
ALTER TABLE webhooks
  ADD CONSTRAINT webhooks_secret_one_form CHECK ((secret IS NULL) <> (secret_sealed IS NULL)),
  ADD CONSTRAINT webhooks_previous_secret_one_form CHECK (previous_secret IS NULL OR previous_secret_sealed IS NULL),
  ADD CONSTRAINT webhooks_secret_sealed_form CHECK (secret_sealed ~ '^v1:[0-9a-f]{8}:'),
  ADD CONSTRAINT webhooks_previous_secret_sealed_form CHECK (previous_secret_sealed ~ '^v1:[0-9a-f]{8}:');
