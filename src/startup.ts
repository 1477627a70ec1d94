// What every process does with a freshly opened store before serving: load the configured identities
// (and, on a first start, create the bootstrap admin key) and the configured agents.
// The CLI, the server, the worker and the tests all go through here, so they agree on the stored state.
import type { Logger } from 'winston';
import type { GatewayConfig } from './config/types';
import { syncAgents } from './agents/sync';
import { syncIdentity, type IdentitySyncOptions, type IdentitySyncResult } from './identity/sync';
import type { Store } from './store/port';

export type ConfiguredStateResult = IdentitySyncResult;

export async function syncConfiguredState(
  config: GatewayConfig,
  store: Store,
  logger: Logger,
  now = new Date(),
  options: IdentitySyncOptions = {},
): Promise<ConfiguredStateResult> {
  const identity = await syncIdentity(config, store, logger, now, options);
  // Agents after identities: an agent's creator name comes from its user.
  await syncAgents(config, store, logger, now);
  return identity;
}
