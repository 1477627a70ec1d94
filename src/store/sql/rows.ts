// Conversions at the SQL boundary: timestamptz columns come back as Date (both drivers) and leave the
// store as ISO-8601 UTC millisecond strings; nested values go in as JSON text cast to jsonb (node-postgres
// would otherwise turn a JS array into a PostgreSQL array literal).
import type { Permission, Role } from '../../config/types';
import { agentModelScope } from '../agent-models';
import type { Principal } from '../types';
import type { SqlParam } from './params';

export type Timestamp = Date | string;

export function iso(value: Timestamp): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

export function isoOrNull(value: Timestamp | null): string | null {
  return value === null ? null : iso(value);
}

export function json(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** Store-side clock for the timestamps the store itself assigns (createdAt of agents, items...). */
export function nowIso(): string {
  return new Date().toISOString();
}

/** Parameters describing a principal, in the order agentPermissionsSql expects them. */
export function principalParams(principal: Principal): [string, string, Role, readonly string[]] {
  return [principal.orgId, principal.userId, principal.role, principal.groups];
}

const PERMISSIONS: readonly Permission[] = ['view', 'edit', 'delete', 'share'];

/**
 * SQL expression: the principal's permissions on agent row `alias`, in canonical order. The creator and
 * the organization's admins hold all four; shares naming the user or one of the principal's groups add
 * theirs. Callers also require `alias.org_id = <org>` (other organizations never see an agent).
 * `user`, `role` and `groups` are placeholders such as `$2` (groups is a text[] parameter).
 */
export function agentPermissionsSql(alias: string, p: { user: string; role: string; groups: string }): string {
  return `ARRAY(
    SELECT perm FROM unnest(ARRAY[${PERMISSIONS.map((x) => `'${x}'`).join(',')}]::text[]) WITH ORDINALITY AS known(perm, ord)
    WHERE ${p.role}::text = 'admin' OR ${alias}.created_by = ${p.user}::text
      OR EXISTS (
        SELECT 1 FROM jsonb_array_elements(${alias}.shared_with) AS share
        WHERE (share->>'user' = ${p.user}::text OR share->>'group' = ANY(${p.groups}::text[]))
          AND share->'permissions' @> to_jsonb(perm)
      )
    ORDER BY ord
  )`;
}

/**
 * SQL condition: agent row `alias` routes only through models the principal's key may use
 * (agent-models.ts), or null when the key has no allow-list. `bind` adds a parameter and returns its
 * placeholder. False for a missing agent row (a LEFT JOIN's NULLs): what cannot be shown allowed is not.
 */
export function agentModelsSql(alias: string, principal: Principal, bind: (value: SqlParam) => string): string | null {
  const scope = agentModelScope(principal);
  if (!scope) return null;
  const own = `${alias}.definition->>'model' = ANY(${bind([...scope.models])}::text[])`;
  if (scope.judgedAllowed) return `(${own})`;
  return `(${own} AND NOT EXISTS (
    SELECT 1 FROM jsonb_array_elements(${alias}.definition->'steps') AS step WHERE step->>'objective' <> ''))`;
}

/** A parameter list and `bind` for it: appends a value, returns its placeholder ($n). */
export function sqlParams(initial: SqlParam[] = []): { params: SqlParam[]; bind: (value: SqlParam) => string } {
  const params = [...initial];
  return {
    params,
    bind(value) {
      params.push(value);
      return `$${params.length}`;
    },
  };
}
