// Starts a real gateway (the app from buildApp, the serve runtime, a real HTTP listener on port 0) on a
// test configuration, for HTTP-level tests. The configuration goes through parseConfig, so schema
// defaults and cross-checks apply exactly as for a config file.
import type { AddressInfo } from 'node:net';
import type { Logger } from 'winston';
import { createServer, type Server } from 'node:http';
import { buildApp, type GatewayApp } from '../../src/app';
import { answerClientErrors } from '../../src/http/client-error';
import type { GatewayConfig } from '../../src/config/types';
import { createLogger } from '../../src/log/logger';
import { startServeRuntime, type Runtime } from '../../src/runtime';
import { syncConfiguredState } from '../../src/startup';
import type { Store } from '../../src/store/port';
import { openTestStore } from './store';
import { TEST_KEYS, testConfig, type ConfigDocument } from './config';

export { TEST_KEYS, baseConfigDocument, mergeConfig, testConfig, type ConfigDocument } from './config';

export interface TestGatewayOptions {
  /** Merged over the base configuration document. */
  config?: ConfigDocument;
  /** Use this store (not closed by close()) instead of a fresh embedded one. */
  store?: Store;
  /** Backend of the fresh store when `store` is not given. */
  driver?: 'embedded' | 'postgres';
  /** The gateway's logger (default: errors only, silent unless TEST_LOGS=1). */
  logger?: Logger;
}

export interface TestGateway {
  readonly url: string;
  readonly config: GatewayConfig;
  readonly gateway: GatewayApp;
  readonly store: Store;
  readonly runtime: Runtime;
  /** Authorization headers for a user of the base configuration. */
  auth(who: keyof typeof TEST_KEYS): Record<string, string>;
  close(): Promise<void>;
}

export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const config = testConfig(options.config ?? {});
  const logger = options.logger ?? createLogger({ level: 'error', silent: process.env['TEST_LOGS'] !== '1' });
  const owned = options.store ? null : await openTestStore(options.driver ?? 'embedded');
  const store = options.store ?? owned!.store;
  await syncConfiguredState(config, store, logger);
  const gateway = await buildApp(config, { store, logger });
  const runtime = await startServeRuntime(gateway.services);
  const server: Server = createServer(gateway.app);
  answerClientErrors(server, logger);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  return {
    url: `http://127.0.0.1:${port}`,
    config,
    gateway,
    store,
    runtime,
    auth: (who) => ({ authorization: `Bearer ${TEST_KEYS[who]}` }),
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.close();
      await gateway.close();
      if (owned) await owned.cleanup();
    },
  };
}
