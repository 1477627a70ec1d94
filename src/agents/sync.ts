// Loads the config's `agents:` into the store at start-up (every process runs it through
// syncConfiguredState). Each agent is upserted: an edited definition becomes a new version, an
// unchanged one keeps its version. Agents that disappeared from the config are soft-deleted: they stop
// being listed or runnable, and their runs stay readable with `agentId: null`.
import type { Logger } from 'winston';
import type { GatewayConfig } from '../config/types';
import type { Store } from '../store/port';
import { agentUpsert } from './definition';

export interface AgentSyncResult {
  /** Ids of agents created or given a new version by this sync. */
  changed: string[];
  /** Ids of agents soft-deleted because the config no longer has them. */
  deleted: string[];
}

export async function syncAgents(config: GatewayConfig, store: Store, logger: Logger, now = new Date()): Promise<AgentSyncResult> {
  const changed: string[] = [];
  for (const agent of config.agents) {
    const org = config.organizations.find((o) => o.id === agent.organization);
    // The config check guarantees the creator exists; the id is a readable fallback all the same.
    const creatorName = org?.users.find((u) => u.id === agent.createdBy)?.name ?? agent.createdBy;
    const result = await store.agents.upsert(agentUpsert(agent, creatorName));
    if (result.changed) {
      changed.push(agent.id);
      logger.info('agent loaded from config', { agentId: agent.id, orgId: agent.organization, version: result.agent.version });
    }
  }
  const deleted = await store.agents.softDeleteExcept(
    config.agents.map((a) => a.id),
    now.toISOString(),
  );
  for (const agentId of deleted) logger.info('agent removed from config: soft-deleted', { agentId });
  return { changed, deleted };
}
