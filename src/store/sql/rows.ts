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

/**
 * JSON text for a json or jsonb parameter. PostgreSQL's jsonb cannot hold U+0000 (22P05 "unsupported
 * Unicode escape sequence"), which model output may contain, nor a lone surrogate (22P02 "Unicode low
 * surrogate must follow a high surrogate"), which a caller's JSON may contain as an escape
 * (`"\\ud800"`, valid JSON, and JSON.stringify writes one back so): one such value would fail the
 * request's write (a 500: a stored response, an agent run's inputs) or an event log's whole batch on
 * every retry. Each is stored as U+FFFD instead.
 */
export function json(value: unknown): string {
  return storableEscapes(JSON.stringify(value ?? null));
}

/** U+0000, a high surrogate and the low one after it, or a low surrogate, each as an escape. */
const UNSTORABLE = /(\\+)u(?:0000|(d[89ab][0-9a-f]{2})(\\ud[c-f][0-9a-f]{2})?|d[c-f][0-9a-f]{2})/gi;

/**
 * JSON text with its U+0000 and lone surrogate escapes replaced by U+FFFD (see json). An escape after
 * an even run of backslashes is text (escaped backslashes) and stays; an escaped surrogate pair
 * (`\\ud83d\\ude00`, as an upstream may write one) is a character and stays.
 */
export function storableEscapes(text: string): string {
  if (!text.includes('\\u')) return text;
  return text.replace(UNSTORABLE, (match: string, slashes: string, high?: string, low?: string) => {
    const escape = slashes.length % 2 === 1;
    // A high surrogate after escaped backslashes is text; the low one after it is then a lone escape.
    if (high !== undefined && !escape) return low === undefined ? match : `${slashes}u${high}\\ufffd`;
    if (!escape || (high !== undefined && low !== undefined)) return match;
    return `${slashes}ufffd`;
  });
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
