// Reading PostgreSQL's EXPLAIN (FORMAT JSON) output in tests: the plan's nodes, and how it reads a table.

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
