import type pg from 'pg';
import { expect } from 'vitest';
import { type SqlQuery, toNumberedParams } from '../../src/db/sql.js';
import type { TestApp } from '../setup/test-app.js';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  /** Index scans: Forward or Backward. */
  'Scan Direction'?: string;
  /** EXPLAIN ANALYZE only. */
  'Actual Loops'?: number;
  'Actual Rows'?: number;
  /** The planner's estimate, in its cost units. */
  'Total Cost'?: number;
  'Rows Removed by Filter'?: number;
  /** EXPLAIN ANALYZE of an index-only scan: rows whose visibility was checked in the heap. */
  'Heap Fetches'?: number;
  Filter?: string;
  'Recheck Cond'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

const nodesOf = (plan: PlanNode) => {
  const nodes: PlanNode[] = [];
  const walk = (node: PlanNode) => {
    nodes.push(node);
    node.Plans?.forEach(walk);
  };
  walk(plan);
  return nodes;
};

/** Every node of the plan of the query exactly as a service sends it (MikroORM inlines the parameters). */
export async function planOf(t: TestApp, query: { sql: string; params: unknown[] }): Promise<PlanNode[]> {
  const rows = await t.deps.orm.em.fork().getConnection().execute<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(`explain (format json) ${query.sql}`, query.params);
  return nodesOf(rows[0]!['QUERY PLAN'][0].Plan);
}

/**
 * Every node of the generic plan PostgreSQL would keep for the query as a named statement (`explain (generic_plan)`:
 * planned without its values).
 */
export async function genericPlanOf(t: TestApp, query: SqlQuery): Promise<PlanNode[]> {
  const rows = await t.sql<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (generic_plan, format json) ${toNumberedParams(query).sql}`);
  return nodesOf(rows[0]!['QUERY PLAN'][0].Plan);
}

/**
 * Every node of the executed plan (EXPLAIN ANALYZE) of a query run as the hot reads run it: `pg` with real
 * parameters, planned with their values.
 */
export async function executedPlanOf(db: pg.ClientBase | pg.Pool, query: SqlQuery): Promise<PlanNode[]> {
  const { sql, params } = toNumberedParams(query);
  const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>({ text: `explain (analyze, format json) ${sql}`, values: params });
  return nodesOf(rows[0]!['QUERY PLAN'][0].Plan);
}

/** A plan on one line, for assertion messages: node, index, loops x rows. */
export const planSummary = (nodes: PlanNode[]) =>
  nodes.map((n) => `${n['Node Type']}${n['Index Name'] ? ` on ${n['Index Name']}` : ''} (${n['Actual Loops'] ?? 0}x${n['Actual Rows'] ?? 0})`).join(' > ');

/**
 * The query's plan (as a service sends it) scans none of `tables` sequentially and reads through an index whose name
 * matches `index`; the plan is the assertions' message.
 */
export async function expectIndexedRead(t: TestApp, query: SqlQuery, tables: string[], index: RegExp): Promise<void> {
  const nodes = await planOf(t, query);
  expect(
    nodes.filter((n) => n['Node Type'] === 'Seq Scan' && tables.includes(n['Relation Name'] ?? '')).map((n) => n['Relation Name']),
    planSummary(nodes),
  ).toEqual([]);
  expect(
    nodes.some((n) => index.test(n['Index Name'] ?? '')),
    planSummary(nodes),
  ).toBe(true);
}
