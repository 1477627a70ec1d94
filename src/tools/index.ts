// The tools area, assembled once per process: the per-conversation workspaces, the guarded web access,
// the hosted catalog (each folder's start-up check run: what cannot run here is disabled, logged) and
// the loop that Responses and agent runs share.
import path from 'node:path';
import type { Logger } from 'winston';
import type { GatewayConfig } from '../config/types';
import type { Metrics } from '../log/metrics';
import type { PrunedConversation, Store } from '../store/port';
import { HOSTED_TOOL_FACTORIES } from './catalog';
import { ConversationEgress } from './conversation-egress';
import { ToolLoop, type McpAccess } from './loop';
import { McpClients, parseMcpTool, type McpServerSpec } from './mcp';
import { ToolRegistry } from './registry';
import type { HostedToolFactory } from './types';
import { createWebAccess, type WebAccess } from './web-access';
import { Workspaces } from './workspace';
import type { Tracing } from '../telemetry/tracing';

export interface Tools {
  readonly registry: ToolRegistry;
  readonly loop: ToolLoop;
  readonly workspaces: Workspaces;
  readonly web: WebAccess;
  /**
   * Conversations went (retention): what the tools keep for each goes too — the tool sets' state
   * (browser contexts, egress choice), MCP sessions and their cached tool lists, the workspace
   * directory, and the tool state in the store. A failure is logged and the rest goes on.
   */
  forget(conversations: readonly PrunedConversation[]): Promise<void>;
  close(): Promise<void>;
}

export interface ToolsDeps {
  config: GatewayConfig;
  store: Store;
  logger: Logger;
  metrics: Metrics;
  now(): Date;
  /** Tests: another catalog. */
  factories?: readonly HostedToolFactory[];
  /** Tracing (null or absent: off): a span per tool call. */
  tracing?: Tracing | null;
}

export async function createTools(deps: ToolsDeps): Promise<Tools> {
  const { config } = deps;
  const workspaces = new Workspaces(path.resolve(config.tools.workspaceDir ?? path.join(config.store.path, 'workspaces')));
  const web = createWebAccess(config.tools.allowHosts);
  const toolDeps = {
    config,
    store: deps.store,
    logger: deps.logger,
    now: deps.now,
    workspaces,
    fetch: web.fetch,
    egress: new ConversationEgress(config, deps.store, deps.now),
  };
  const registry = await ToolRegistry.create(toolDeps, deps.factories ?? HOSTED_TOOL_FACTORIES);
  const mcpClients = new McpClients({ webAccess: web, logger: deps.logger, config });
  // The loop hands back the servers parse() made: each is an McpServerSpec.
  const mcp: McpAccess = {
    parse: parseMcpTool,
    listTools: (server, conversationId, signal) => mcpClients.listTools(server as McpServerSpec, conversationId, signal),
    callTool: (server, conversationId, name, args, signal) => mcpClients.callTool(server as McpServerSpec, conversationId, name, args, signal),
    needsApproval: (server, toolName) => mcpClients.needsApproval(server as McpServerSpec, toolName),
  };
  const loop = new ToolLoop({
    registry,
    mcp,
    workspaces,
    config: config.tools,
    store: deps.store,
    metrics: deps.metrics,
    logger: deps.logger,
    tracing: deps.tracing ?? null,
  });
  return {
    registry,
    loop,
    workspaces,
    web,
    async forget(conversations) {
      for (const conversation of conversations) {
        const steps = await Promise.allSettled([
          registry.forget(conversation.id),
          mcpClients.forget(conversation.id),
          workspaces.remove(conversation.orgId, conversation.id),
          deps.store.toolState.forget(conversation.id),
        ]);
        const failed = steps.find((step): step is PromiseRejectedResult => step.status === 'rejected');
        if (failed) {
          const reason: unknown = failed.reason;
          deps.logger.warn('tool state of a pruned conversation not fully released', {
            conversationId: conversation.id,
            errorName: reason instanceof Error ? reason.name : 'unknown',
          });
        }
      }
    },
    async close() {
      await registry.close();
      await mcpClients.close();
      await web.close();
    },
  };
}
