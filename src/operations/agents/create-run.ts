import { callerOf, visibleAgent } from '../../agents/access';
import { presentAccepted } from '../../agents/presenters';
import { readRunInputs } from '../../agents/run-inputs';
import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';

/**
 * POST /v1/agents/runs. The generated validator has checked the body's shape; the run service drops
 * unknown input names and answers 422 naming every missing required label. Triggers on the agent do
 * not stop it from being run here.
 */
export const createRun: Handler = async (ctx, { store, runs }) => {
  const body = ctx.body as { agentId?: unknown; inputs?: unknown } | undefined;
  const agentId = body?.agentId;
  if (typeof agentId !== 'string' || agentId === '') {
    throw new GatewayError('validation_failed', "Invalid request: 'agentId' is required.", { param: 'agentId' });
  }
  const inputs = readRunInputs(body?.inputs);
  const principal = callerOf(ctx);
  const agent = await visibleAgent(store, principal, agentId);
  ctx.resourceIds['agentId'] = agent.id;
  const run = await runs.trigger({ principal, agent, inputs, trigger: 'api' });
  ctx.resourceIds['runId'] = run.id;
  return { status: 202, body: presentAccepted(run) };
};
