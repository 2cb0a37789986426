import type { AccessRight } from '../types';
import { ANY } from './rights-model';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What a group's rights give, in a line for the groups list: "alerts #3, #5 · nodes: read · edges: none · 1 action". */
export function describeRights(rights: readonly AccessRight[]): string {
  const alerts = rights.filter((r) => r.targetType === 'alert' && r.type === 'read').map((r) => r.targetName);
  const alertWords = alerts.includes(ANY) ? 'every alert' : alerts.length === 0 ? 'no alert' : `alert${alerts.length === 1 ? '' : 's'} ${alerts.map((id) => `#${id}`).join(', ')}`;
  const items = (type: 'nodeCategory' | 'edgeType', noun: string) => {
    const own = rights.filter((r) => r.targetType === type);
    const any = own.find((r) => r.targetName === ANY)?.type ?? 'none';
    const named = own.length - (own.some((r) => r.targetName === ANY) ? 1 : 0);
    return `${noun}: ${any}${named ? ` (${plural(named, 'named apart', 'named apart')})` : ''}`;
  };
  const actions = rights.filter((r) => r.targetType === 'action' && r.type === 'do').length;
  return [alertWords, items('nodeCategory', 'nodes'), items('edgeType', 'edges'), plural(actions, 'action')].join(' · ');
}
