import type { Action } from '../types';

/**
 * LKE's actions in words, and whether this service acts on them (src/access/access-rights.ts, ENFORCED_ACTIONS): the
 * others are stored and answered for LKE's client, and change nothing here (docs/security.md).
 */
export const ACTION_WORDS: Record<Action, { words: string; enforced?: true }> = {
  'admin.connect': { words: 'connect and reset the data source' },
  'admin.index': { words: 'index the data source' },
  'admin.users': { words: 'manage the users of the data source' },
  'admin.schema': { words: 'edit the graph schema' },
  'admin.schema.read': { words: 'read the graph schema' },
  'admin.alerts': { words: 'manage every alert' },
  manageAlert: { words: 'create and edit alerts' },
  'admin.report': { words: 'process reports' },
  'admin.styles': { words: 'set default styles and captions' },
  'admin.spaces': { words: 'manage spaces' },
  runQuery: { words: 'run saved queries' },
  rawReadQuery: { words: 'run read queries typed by hand (graph queries, alert previews)', enforced: true },
  rawWriteQuery: { words: 'run write queries typed by hand' },
  manageQuery: { words: 'save and share queries' },
  runCustomAction: { words: 'run custom actions' },
  writeCustomAction: { words: 'write custom actions' },
  manageCustomAction: { words: 'manage custom actions' },
  applyNodeGrouping: { words: 'apply node grouping rules' },
  createNodeGrouping: { words: 'create node grouping rules' },
  manageNodeGrouping: { words: 'manage node grouping rules' },
};
