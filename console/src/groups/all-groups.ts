import { get } from '../api';
import { GROUPS, type DataSource, type Group, type SourceGroup } from '../types';
import { useLoad } from '../use-api';
import { groupsApiPath } from './group-paths';

/** A group a user or an API key may be put in: the built-in ones, then each data source's custom groups. */
export interface GroupChoice {
  id: number;
  /** "Admin", "Fraud team (Fraud)". */
  label: string;
  builtin: boolean;
}

/** One call per data source (there are a few): every group there is, for the users page's choices. */
async function loadGroupChoices(signal: AbortSignal): Promise<GroupChoice[]> {
  const sources = await get<DataSource[]>('/api/dataSources', signal);
  const lists = await Promise.all(sources.map((s) => get<SourceGroup[]>(groupsApiPath(s.key), signal).then((groups) => groups.map((g) => ({ g, s })))));
  const custom = lists.flat().filter(({ g }) => !g.builtin);
  return [...GROUPS.map((g) => ({ id: g.id, label: g.name, builtin: true })), ...custom.map(({ g, s }) => ({ id: g.id, label: `${g.name} (${s.name})`, builtin: false }))];
}

export const useGroupChoices = () => useLoad(loadGroupChoices, []);

/** A member's groups as the users list shows them: a custom group with its data source. */
export const groupLabel = (group: Group) => (group.sourceKey ? `${group.name} (${group.sourceKey})` : group.name);
