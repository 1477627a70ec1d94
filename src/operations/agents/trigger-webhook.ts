import { presentAccepted } from '../../agents/presenters';
import { readRunInputs } from '../../agents/run-inputs';
import { installationSecret } from '../../agents/secrets';
import { verifyWebhookToken } from '../../agents/webhook-token';
import { GatewayError } from '../../http/errors';
import type { Principal } from '../../store/types';
import type { Handler } from '../types';

/**
 * POST /v1/webhooks/{token} (no API key: the token is the secret). Starts a run of the token's agent
 * as the agent's creator with the posted `{inputs: [{name, value}]}` (optional) and answers like the
 * run trigger: 202 `{runId, conversationId}`, 422 naming missing required labels, 429 past the
 * organization's or the creator's rate limit. Any token we did not issue, for a deleted agent or for a
 * trigger no longer a webhook, is 404.
 */
export const triggerWebhook: Handler = async (ctx, { store, runs, pipeline }) => {
  const token = ctx.params['token'] ?? '';
  const notFound = new GatewayError('not_found', 'Webhook not found.');
  const target = token.length <= 200 ? verifyWebhookToken(await installationSecret(store, 'webhook-secret'), token) : null;
  if (!target) throw notFound;
  const agent = await store.agents.get(target.agentId);
  if (!agent || agent.deletedAt !== null || agent.triggers[target.triggerIndex]?.type !== 'webhook') throw notFound;

  const inputs = readRunInputs((ctx.body as { inputs?: unknown } | undefined)?.inputs);
  const [creator, groups] = await Promise.all([store.users.get(agent.createdBy), store.groups.groupIdsOf(agent.orgId, agent.createdBy)]);
  const principal: Principal = { orgId: agent.orgId, userId: agent.createdBy, keyId: null, role: creator?.role ?? 'member', groups };
  ctx.principal ??= principal;
  ctx.resourceIds['agentId'] = agent.id;
  // No API key, but the organization's (and the creator's) rate limits apply as to any call.
  await pipeline.admit(ctx);
  const run = await runs.trigger({ principal, agent, inputs, trigger: 'webhook' });
  ctx.resourceIds['runId'] = run.id;
  return { status: 202, body: presentAccepted(run) };
};
