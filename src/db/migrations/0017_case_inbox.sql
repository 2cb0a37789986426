-- The analysts' case inbox (issue 40): who a case is assigned to, and the indexes a page of the inbox is read from
-- (src/alerts/case-inbox.ts says which plan walks which; bench/README.md, "Case inbox", what a page costs among
-- 1,000,000 cases).

-- A deleted user is no longer anyone's assignee (cases_assignee below serves the foreign key's SET NULL).
ALTER TABLE cases ADD COLUMN assigned_user_id integer REFERENCES users (id) ON DELETE SET NULL;
-- An `assign` line of the action log: who the case was assigned to (NULL: unassigned).
ALTER TABLE case_actions ADD COLUMN assigned_user_id integer REFERENCES users (id) ON DELETE SET NULL;

-- The whole inbox in each order (the `window` plan): a page is the next cases of the walk that match.
CREATE INDEX cases_updated ON cases (updated_at, id);
CREATE INDEX cases_created ON cases (created_at, id);
-- Each alert's cases of one status in each order (the `merge` plan: one walk per alert and status, a page from each);
-- by id, 0002's cases_alert_status (alert_id, status, id).
CREATE INDEX cases_alert_status_updated ON cases (alert_id, status, updated_at, id);
CREATE INDEX cases_alert_status_created ON cases (alert_id, status, created_at, id);
-- One user's cases, by update (the `direct` plan): only assigned cases have an entry.
CREATE INDEX cases_assignee ON cases (assigned_user_id, updated_at, id) WHERE assigned_user_id IS NOT NULL;
