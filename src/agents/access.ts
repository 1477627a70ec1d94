// Shared checks of the agent and run handlers: the caller, id syntax, and visibility. Everything the
// caller may not see is 404 with a message naming the resource (spec: missing and forbidden are not
// distinguished on the agent and run endpoints); visibility itself is decided in the store query.
import type { RequestContext } from '../pipeline/context';
import { GatewayError } from '../http/errors';
import { agentModelScope, definitionAllowed } from '../store/agent-models';
import type { Store } from '../store/port';
import type { Principal, VisibleAgent, VisibleRun } from '../store/types';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => UUID.test(value);

export function callerOf(ctx: RequestContext): Principal {
  if (ctx.principal === null) throw new GatewayError('unauthorized', 'Missing API key.');
  return ctx.principal;
}

/** A path id that must be a UUID: 400 naming the parameter otherwise. */
export function uuidParam(ctx: RequestContext, name: string): string {
  const value = ctx.params[name] ?? '';
  if (!isUuid(value)) throw new GatewayError('invalid_id', `Invalid request: '${name}' must be a UUID.`, { param: name });
  return value;
}

export const agentNotFound = (agentId: string): GatewayError => new GatewayError('not_found', `Agent ${agentId} not found.`);
export const runNotFound = (runId: string): GatewayError => new GatewayError('not_found', `Run ${runId} not found.`);

export async function visibleAgent(store: Store, principal: Principal, agentId: string): Promise<VisibleAgent> {
  const agent = isUuid(agentId) ? await store.agents.getVisible(principal, agentId) : null;
  if (!agent) throw agentNotFound(agentId);
  return agent;
}

export async function visibleRun(store: Store, principal: Principal, runId: string): Promise<VisibleRun> {
  const run = await store.runs.getVisible(principal, runId);
  if (!run) throw runNotFound(runId);
  return run;
}

/**
 * For the cancel/retry extensions: the run must be visible (else 404) and the caller needs `edit` on
 * its agent (else 403: they can see the run, so hiding it gains nothing). A soft-deleted agent is no
 * longer shared with anyone, so only organization admins may still act on its runs.
 */
export async function requireEditOnRunAgent(store: Store, principal: Principal, run: VisibleRun): Promise<void> {
  if (run.agentDeleted) {
    if (principal.role === 'admin' && principal.orgId === run.orgId) return;
  } else {
    const agent = await store.agents.getVisible(principal, run.agentId);
    if (agent?.permissions.includes('edit')) return;
  }
  throw new GatewayError('forbidden', `Edit permission on agent ${run.agentId} is required to change run ${run.id}.`);
}

/**
 * For retry, which executes the run's own agent version again: that version may route through models
 * other than the agent's current ones (which made the run visible), so a key with a model allow-list
 * needs it within the list too (else 403: the run is visible to it). A missing version passes: the
 * execution then fails without calling any model.
 */
export async function requireRunVersionWithinKey(store: Store, principal: Principal, run: VisibleRun): Promise<void> {
  if (!agentModelScope(principal)) return;
  const version = await store.agents.getVersion(run.agentId, run.agentVersion);
  if (!version || definitionAllowed(principal, version.definition)) return;
  throw new GatewayError(
    'forbidden',
    `Run ${run.id} ran version ${run.agentVersion} of agent ${run.agentId}, which uses a model this key may not call; restart the run to run the agent's current version.`,
  );
}
