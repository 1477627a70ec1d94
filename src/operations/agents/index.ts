// Agents, runs, evaluations, conversation items and webhook triggers (flat envelope except conversations).
import { pending } from '../pending';
import type { Handler } from '../types';

export const agentHandlers: Readonly<Record<string, Handler>> = {
  listAgents: pending('listAgents'),
  getAgent: pending('getAgent'),
  getAgentWebhooks: pending('getAgentWebhooks'),
  createRun: pending('createRun'),
  getRun: pending('getRun'),
  restartRun: pending('restartRun'),
  cancelRun: pending('cancelRun'),
  retryRun: pending('retryRun'),
  getRunEvals: pending('getRunEvals'),
  listConversationItems: pending('listConversationItems'),
  triggerWebhook: pending('triggerWebhook'),
};
