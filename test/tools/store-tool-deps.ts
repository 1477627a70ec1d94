// ToolDeps on real parts for the tools that work on the store (knowledge search, dashboards): the
// given store and configuration, workspaces in a fresh temp directory, the SSRF-guarded fetch (these
// tools never fetch), no egress profile.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { GatewayConfig } from '../../src/config/types';
import { createLogger } from '../../src/log/logger';
import type { Store } from '../../src/store/port';
import type { HostedTool, HostedToolFactory, ToolCallContext, ToolDeps } from '../../src/tools/types';
import { createWebAccess } from '../../src/tools/web-access';
import { Workspaces } from '../../src/tools/workspace';

export interface StoreToolHarness {
  deps: ToolDeps;
  tool(type: string): HostedTool;
  ctx(orgId?: string, userId?: string): ToolCallContext;
  close(): Promise<void>;
}

export async function storeToolHarness(factory: HostedToolFactory, store: Store, config: GatewayConfig): Promise<StoreToolHarness> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'agw-store-tools-'));
  const web = createWebAccess(['127.0.0.1']);
  const workspaces = new Workspaces(root);
  const deps: ToolDeps = {
    config,
    store,
    logger: createLogger({ level: 'error', silent: process.env['TEST_LOGS'] !== '1' }),
    now: () => new Date(),
    workspaces,
    fetch: web.fetch,
    egress: { proxyFor: () => Promise.resolve(null) },
  };
  const set = factory(deps);
  return {
    deps,
    tool(type) {
      const found = set.tools.find((t) => t.type === type);
      if (!found) throw new Error(`no tool ${type}`);
      return found;
    },
    ctx: (orgId = 'acme', userId = 'u-admin') => ({
      orgId,
      userId,
      conversationId: 'conv-test',
      signal: new AbortController().signal,
      workspace: workspaces.of(orgId, 'conv-test'),
    }),
    async close() {
      await set.close?.();
      await web.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
