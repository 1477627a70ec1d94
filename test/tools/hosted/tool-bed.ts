// What a hosted tool's test needs, built as the gateway would: the test configuration (with a patch),
// a real store, workspaces on a temp dir, the SSRF-guarded web access with the test's fake servers
// allow-listed by host:port, the conversation egress over the store, and the project's logger writing
// into an array (so a test can show a secret never reaches a log line).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import winston from 'winston';
import { createLogger } from '../../../src/log/logger';
import { ConversationEgress } from '../../../src/tools/conversation-egress';
import type { HostedTool, HostedToolFactory, HostedToolSet, ToolCallContext, ToolDeps } from '../../../src/tools/types';
import { createWebAccess } from '../../../src/tools/web-access';
import { Workspaces } from '../../../src/tools/workspace';
import { testConfig, type ConfigDocument } from '../../helpers/config';
import { openTestStore, type TestStore, type TestStoreDriver } from '../../helpers/store';

export interface ToolBed {
  deps: ToolDeps;
  testStore: TestStore;
  /** Every log line written, as JSON text. */
  logs: string[];
  /** A call context in a conversation of an organization (acme by default). */
  ctx(conversationId: string, orgId?: string, signal?: AbortSignal): ToolCallContext;
  /** The tool of that type from a factory's set (the set is built once per factory). */
  tool(factory: HostedToolFactory, type: string): HostedTool;
  close(): Promise<void>;
}

export async function openToolBed(options: { config?: ConfigDocument; allowHosts?: string[]; driver?: TestStoreDriver } = {}): Promise<ToolBed> {
  const config = testConfig(options.config ?? {});
  const testStore = await openTestStore(options.driver ?? 'embedded');
  const root = await mkdtemp(path.join(os.tmpdir(), 'agw-tool-bed-'));
  const web = createWebAccess(options.allowHosts ?? []);
  const logs: string[] = [];
  const logger = createLogger({ level: 'debug', silent: false });
  logger.clear();
  logger.add(
    new winston.transports.Stream({
      stream: new Writable({
        write(chunk: Buffer, _encoding, done) {
          logs.push(chunk.toString());
          done();
        },
      }),
    }),
  );
  const workspaces = new Workspaces(root);
  const deps: ToolDeps = {
    config,
    store: testStore.store,
    logger,
    now: () => new Date(),
    workspaces,
    fetch: web.fetch,
    egress: new ConversationEgress(config, testStore.store),
  };
  const sets = new Map<HostedToolFactory, HostedToolSet>();
  return {
    deps,
    testStore,
    logs,
    ctx(conversationId, orgId = 'acme', signal = new AbortController().signal) {
      return { orgId, userId: 'u-member', conversationId, signal, workspace: workspaces.of(orgId, conversationId) };
    },
    tool(factory, type) {
      let set = sets.get(factory);
      if (!set) {
        set = factory(deps);
        sets.set(factory, set);
      }
      const found = set.tools.find((t) => t.type === type);
      if (!found) throw new Error(`no tool ${type} in the set`);
      return found;
    },
    async close() {
      for (const set of sets.values()) await set.close?.();
      await web.close();
      await testStore.cleanup();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export function conversationId(): string {
  return `conv_${randomUUID().replace(/-/g, '')}`;
}
