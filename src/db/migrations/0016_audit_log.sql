-- Who did what on alerts, cases, groups and access rights (issue 40): one row per change, written in the change's own
-- transaction, read by Admins, removed on the cleanup schedule after its own retention. Who acted is copied, not
-- referenced: the log keeps it after the user or the API key is deleted or renamed.
CREATE TABLE audit_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  user_id integer,
  username text,
  application_id integer,
  application_name text,
  action text NOT NULL,
  target_type text NOT NULL,
  target_id text NOT NULL,
  source_key text,
  before jsonb,
  after jsonb
);
CREATE INDEX audit_log_at ON audit_log (at, id);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, id);
