/** A case's target and its hash: made beside the graph (graph/match-identity.ts), where the Kùzu process makes them too. */
export { hashTarget, MAX_TARGET_IDS, targetOf, type Match, type Target } from '../graph/match-identity.js';
