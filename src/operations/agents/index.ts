// Agents, runs, evaluations, conversation items and webhook triggers (flat envelope except conversations).
import type { Handler } from '../types';
import { cancelRun } from './cancel-run';
import { createRun } from './create-run';
import { getAgent } from './get-agent';
import { getAgentWebhooks } from './get-agent-webhooks';
import { getRun } from './get-run';
import { getRunEvals } from './get-run-evals';
import { listAgents } from './list-agents';
import { listConversationItems } from './list-conversation-items';
import { restartRun } from './restart-run';
import { retryRun } from './retry-run';
import { triggerWebhook } from './trigger-webhook';

export const agentHandlers: Readonly<Record<string, Handler>> = {
  listAgents,
  getAgent,
  getAgentWebhooks,
  createRun,
  getRun,
  restartRun,
  cancelRun,
  retryRun,
  getRunEvals,
  listConversationItems,
  triggerWebhook,
};
