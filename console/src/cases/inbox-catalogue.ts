import { get } from '../api';
import type { Alert, DataSource } from '../types';
import { useLoad } from '../use-api';

/** The data sources and alerts the signed-in user may read: the inbox's filter choices and its rows' names. */
export interface Catalogue {
  sources: DataSource[];
  alerts: Alert[];
}

/**
 * Every readable alert of every readable source: one call per source (there are a few). A source whose alerts do
 * not answer is left out of the choices rather than failing the inbox.
 */
async function loadCatalogue(signal: AbortSignal): Promise<Catalogue> {
  const sources = await get<DataSource[]>('/api/dataSources', signal);
  const lists = await Promise.all(
    sources.map((s) => get<{ items: Alert[] }>(`/api/${encodeURIComponent(s.key)}/alerts?limit=1000`, signal).then((list) => list.items, () => [])),
  );
  return { sources, alerts: lists.flat() };
}

export const useCatalogue = () => useLoad(loadCatalogue, []);

export const sourceName = (catalogue: Catalogue | undefined, sourceKey: string) => catalogue?.sources.find((s) => s.key === sourceKey)?.name ?? sourceKey;
