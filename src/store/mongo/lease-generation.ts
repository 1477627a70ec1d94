// The lease-generation filter shared by the runs and conversations repositories (fenced writes check
// it). In a module of its own so those two repositories do not import each other.
import type { FilterOperators } from 'mongodb';

/** A generation filter that also matches documents written before lease fencing (no field: 0). */
export function generationIs(generation: number): number | FilterOperators<number | undefined> {
  return generation === 0 ? { $not: { $gt: 0 } } : generation;
}
