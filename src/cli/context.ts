import type { Logger } from 'winston';
import { loadConfig, resolveConfigPath } from '../config/load';
import type { GatewayConfig } from '../config/types';
import { createLogger } from '../log/logger';
import { createStore } from '../store/index';
import type { Store } from '../store/port';
import { syncConfiguredState } from '../startup';
import { CliError } from './args';
import { tryLockEmbedded, type EmbeddedLock } from './embedded-lock';

export interface CliContext {
  config: GatewayConfig;
  configPath: string;
  logger: Logger;
  store: Store;
  /** The admin key created on a first start (print it once), else null. */
  bootstrapKey: string | null;
  /** Closes the store and releases the embedded store's lock. */
  close(): Promise<void>;
}

/** The embedded store is held by another live process (a running gateway, normally). */
export class EmbeddedStoreBusy extends CliError {
  constructor(
    readonly storePath: string,
    readonly holderPid: number,
  ) {
    super(`the embedded store at ${storePath} is in use by process ${holderPid}`);
  }
}

export async function loadCliConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<{ config: GatewayConfig; configPath: string }> {
  const configPath = resolveConfigPath(argv, env);
  return { config: await loadConfig(configPath, env), configPath };
}

/** Loads the config and opens the store (locked if embedded, migrated, configured state synced). */
export async function openContext(argv: readonly string[], env: NodeJS.ProcessEnv, component: string): Promise<CliContext> {
  const { config, configPath } = await loadCliConfig(argv, env);
  // Admin commands print their result; their own log lines would only be noise around it.
  const level = component === 'cli' && config.logging.level !== 'debug' ? 'warn' : config.logging.level;
  const logger = createLogger({ level, component });
  let lock: EmbeddedLock | null = null;
  if (config.store.driver === 'embedded') {
    const attempt = await tryLockEmbedded(config.store.path);
    if (!attempt.acquired) throw new EmbeddedStoreBusy(config.store.path, attempt.holderPid);
    lock = attempt.lock;
  }
  let store: Store;
  try {
    store = await createStore(config.store, { logger });
  } catch (err) {
    await lock?.release();
    throw err;
  }
  const close = async (): Promise<void> => {
    try {
      await store.close();
    } finally {
      await lock?.release();
    }
  };
  try {
    const { bootstrapKey } = await syncConfiguredState(config, store, logger, new Date(), { bootstrap: component === 'gateway' });
    return { config, configPath, logger, store, bootstrapKey, close };
  } catch (err) {
    await close();
    throw err;
  }
}
