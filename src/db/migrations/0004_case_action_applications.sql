-- A case action made through an API key records the key's application, so the log shows that an integration acted
-- for the user. Copied, not referenced: the log keeps who acted after the application is deleted or renamed.
ALTER TABLE case_actions
  ADD COLUMN application_id integer,
  ADD COLUMN application_name text;
