/** The groups pages of a data source, and one group's page (its access rights). */
export const groupsPath = (sourceKey: string) => `/sources/${encodeURIComponent(sourceKey)}/groups`;
export const groupPath = (sourceKey: string, groupId: number | string) => `${groupsPath(sourceKey)}/${groupId}`;
export const groupsApiPath = (sourceKey: string) => `/api/admin/${encodeURIComponent(sourceKey)}/groups`;
