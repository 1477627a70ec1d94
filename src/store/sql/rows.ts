// Conversions at the SQL boundary: timestamptz columns come back as Date (both drivers) and leave the
// store as ISO-8601 UTC millisecond strings; nested values go in as JSON text cast to jsonb (node-postgres
// would otherwise turn a JS array into a PostgreSQL array literal).
import type { Permission, Role } from '../../config/types';
import type { Principal } from '../types';

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
