// Reading PostgreSQL's EXPLAIN (FORMAT JSON) output in tests: a repository's statements explained
// instead of run, the plan's nodes, and how it reads a table.
import type pg from 'pg';
import type { SqlExecutor, SqlParam } from '../../src/store/sql/database';
import { driverParams } from '../../src/store/sql/params';

export interface PlanNode {
  'Node Type': string;
  'Index Cond'?: string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** The plan's nodes, the root first. */
export function planNodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}

/** How each node reading `table` reads it: an index with a condition (`lookup`), a whole index, or the table (its node type). */
export function readsOf(plan: readonly PlanNode[], table: string): string[] {
  const reads: string[] = [];
  for (const node of plan) {
    if (node['Relation Name'] !== table || node['Node Type'] === 'ModifyTable') continue;
    switch (node['Node Type']) {
      case 'Bitmap Heap Scan': {
        const index = (node.Plans ?? []).flatMap(planNodes).find((n) => n['Node Type'] === 'Bitmap Index Scan');
        reads.push(`lookup ${index?.['Index Name'] ?? '?'}`);
        break;
      }
      case 'Index Scan':
      case 'Index Only Scan':
        reads.push(`${'Index Cond' in node ? 'lookup' : 'whole index'} ${node['Index Name'] ?? '?'}`);
        break;
      default:
        reads.push(node['Node Type']);
    }
  }
  return [...new Set(reads)].sort();
}

/** An executor that explains each statement on `client` (planned, not run), pushes its plan's nodes to `plans`, and returns no rows. */
export function explainingExecutor(client: pg.Client, plans: PlanNode[][]): SqlExecutor {
  return {
    async query<R extends object>(text: string, params: readonly SqlParam[] = []): Promise<R[]> {
      const result = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${text}`, driverParams(params));
      plans.push(planNodes(result.rows[0]!['QUERY PLAN'][0].Plan));
      return [];
    },
  };
}
