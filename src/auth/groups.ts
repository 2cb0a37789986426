/**
 * The two built-in groups (docs/api.md, Sign-in, users and API keys): rows like every group (auth/membership.ts looks
 * groups up in the database), global rather than a data source's, and never renamed or deleted. Their ids are fixed:
 * the rules that name them (the last Admin, an API key's Admin) and existing installs rely on them.
 */
export const ADMIN_GROUP_ID = 1;
export const ANALYST_GROUP_ID = 2;

/** Groups one user or API key may be given in one call. */
export const MAX_GROUPS_PER_MEMBER = 10;
