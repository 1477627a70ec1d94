// Schedule triggers: which ones exist, and what a firing does (start a run as the agent's creator).
import type { Logger } from 'winston';
import { GatewayError } from '../http/errors';
import type { ScheduleEntry } from '../queue/port';
import type { Store } from '../store/port';
import type { AgentRecord, Principal } from '../store/types';
import type { RunService } from './port';

export function scheduleEntries(agents: readonly AgentRecord[]): ScheduleEntry[] {
  return agents.flatMap((agent) =>
    agent.deletedAt
      ? []
      : agent.triggers.flatMap((trigger, triggerIndex) =>
          trigger.type === 'schedule' ? [{ agentId: agent.id, triggerIndex, cron: trigger.cron, timezone: trigger.timezone }] : [],
        ),
  );
}

/** The principal scheduled and webhook runs are triggered as: the agent's creator. */
export async function creatorPrincipal(store: Store, agent: AgentRecord): Promise<Principal> {
  const [user, groups] = await Promise.all([store.users.get(agent.createdBy), store.groups.groupIdsOf(agent.orgId, agent.createdBy)]);
  return { orgId: agent.orgId, userId: agent.createdBy, keyId: null, role: user?.role ?? 'member', groups };
}

export interface ScheduleDeps {
  store: Store;
  runs: RunService;
  logger: Logger;
}

/** A schedule trigger fired: runs the agent's latest version with the trigger's inputs. */
export async function fireSchedule(deps: ScheduleDeps, agentId: string, triggerIndex: number, firedAt: string): Promise<void> {
  const agent = await deps.store.agents.get(agentId);
  const trigger = agent?.triggers[triggerIndex];
  // The agent was removed or its triggers changed since the schedule was registered.
  if (!agent || agent.deletedAt || trigger?.type !== 'schedule') return;
  const inputs = Object.entries(trigger.inputs ?? {}).map(([name, value]) => ({ name, value }));
  try {
    const run = await deps.runs.trigger({ principal: await creatorPrincipal(deps.store, agent), agent, inputs, trigger: 'schedule' });
    deps.logger.info('schedule trigger started a run', { agentId, triggerIndex, firedAt, runId: run.id });
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    deps.logger.warn('schedule trigger could not start a run', { agentId, triggerIndex, firedAt, code: err.code });
  }
}
