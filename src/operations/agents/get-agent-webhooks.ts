import { callerOf, uuidParam, visibleAgent } from '../../agents/access';
import { installationSecret } from '../../agents/secrets';
import { webhookToken } from '../../agents/webhook-token';
import { GatewayError } from '../../http/errors';
import type { RequestContext } from '../../pipeline/context';
import type { Handler } from '../types';

/** Absolute base of the URLs shown, as the caller reached us (Express honours server.trustProxy). */
function baseUrl(ctx: RequestContext): string {
  const req = ctx.req as RequestContext['req'] & { protocol?: string; host?: string };
  const host = req.host ?? req.headers.host ?? '127.0.0.1';
  return `${req.protocol ?? 'http'}://${host}`;
}

/**
 * Extension: the secret URL of each webhook trigger. The URL is a credential that starts runs, so
 * only users with edit permission see it: others who can see the agent get 403, the rest 404.
 */
export const getAgentWebhooks: Handler = async (ctx, { store }) => {
  const agent = await visibleAgent(store, callerOf(ctx), uuidParam(ctx, 'agentId'));
  if (!agent.permissions.includes('edit')) {
    throw new GatewayError('forbidden', `Edit permission on agent ${agent.id} is required to see its webhook URLs.`);
  }
  const secret = await installationSecret(store, 'webhook-secret');
  const base = baseUrl(ctx);
  const items = agent.triggers.flatMap((trigger, triggerIndex) =>
    trigger.type === 'webhook' ? [{ triggerIndex, url: `${base}/v1/webhooks/${webhookToken(secret, agent.id, triggerIndex)}` }] : [],
  );
  return { status: 200, body: { items } };
};
