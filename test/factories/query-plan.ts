import type { TestApp } from '../setup/test-app.js';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** Every node of the plan of the query exactly as a service sends it (MikroORM inlines the parameters). */
export async function planOf(t: TestApp, query: { sql: string; params: unknown[] }): Promise<PlanNode[]> {
  const rows = await t.deps.orm.em.fork().getConnection().execute<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(`explain (format json) ${query.sql}`, query.params);
  const nodes: PlanNode[] = [];
  const walk = (node: PlanNode) => {
    nodes.push(node);
    node.Plans?.forEach(walk);
  };
  walk(rows[0]!['QUERY PLAN'][0].Plan);
  return nodes;
}
