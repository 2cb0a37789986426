/** One node of an `EXPLAIN (ANALYZE, FORMAT JSON)` plan: the fields the plan tests read. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

/**
 * Every node of the plan in an `EXPLAIN (ANALYZE, FORMAT JSON)` result row, the root first. `queryPlan` is the row's
 * `QUERY PLAN` value: parsed JSON on PostgreSQL, JSON text on PGlite.
 */
export function planNodes(queryPlan: unknown): PlanNode[] {
  const explained = (typeof queryPlan === 'string' ? JSON.parse(queryPlan) : queryPlan) as [{ Plan: PlanNode }];
  return nodes(explained[0].Plan);
}

/** What a plan did on one table or index: the nodes that match, their loops and the rows they returned, summed. */
export function visits(plan: PlanNode[], match: (node: PlanNode) => boolean): { nodes: number; loops: number; rows: number } {
  const hit = plan.filter(match);
  return {
    nodes: hit.length,
    loops: hit.reduce((sum, n) => sum + n['Actual Loops'], 0),
    rows: hit.reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0),
  };
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}
