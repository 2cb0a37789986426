-- Webhooks that can be changed, paused, rotated and retired without losing their history (issue 10).

ALTER TABLE webhooks
  -- A free text for the admins (at most 500 characters, checked by the code); '' when none was given.
  ADD COLUMN description text NOT NULL DEFAULT '',
  -- A disabled webhook still gets its deliveries recorded; none of them is claimed until it is enabled again.
  ADD COLUMN enabled boolean NOT NULL DEFAULT true,
  ADD COLUMN disabled_at timestamptz,
  -- "by <username>" or "automatically after …".
  ADD COLUMN disabled_reason text,
  -- Moved by every change of what a worker caches (url, secrets, enabled). Each claim returns it with its
  -- deliveries, so a worker in any process reloads an endpoint whose version moved before sending to it.
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  -- The secret before the last rotation, still signing (besides the current one) until it expires.
  ADD COLUMN previous_secret text,
  ADD COLUMN previous_secret_expires_at timestamptz,
  -- When the attempts to this webhook started failing with none succeeding since (NULL while they succeed):
  -- the automatic disabling compares it with autoDisableAfterMs when a delivery ends failed.
  ADD COLUMN failing_since timestamptz;

-- webhookDisabled may be subscribed to like any event.
ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_event_type_check;
ALTER TABLE webhook_subscriptions ADD CONSTRAINT webhook_subscriptions_event_type_check
  CHECK (event_type IN ('newCase', 'newMatch', 'caseStatusChange', 'webhookDisabled'));
