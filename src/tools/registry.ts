// The hosted tool catalog of this gateway: every tool folder's tools (catalog.ts), less those that
// cannot run on this machine (their start-up check failed: logged, never run without what they need)
// and those the operator switched off, globally (tools.disabled) or per organization
// (organizations[].tools.disabled). `{type: svc_tools}` expands to an organization's current set at
// request time (Versioning rule 5: the set can change between requests).
import type { Logger } from 'winston';
import type { ToolDefinition } from '../canonical/model';
import type { GatewayConfig } from '../config/types';
import { GatewayError } from '../http/errors';
import type { HostedTool, HostedToolFactory, HostedToolSet, ToolDeps } from './types';

export const SVC_TOOLS = 'svc_tools';

export class ToolRegistry {
  private readonly tools = new Map<string, HostedTool>();
  private readonly unavailable = new Map<string, string>();
  private readonly sets: HostedToolSet[] = [];

  private constructor(
    private readonly config: GatewayConfig,
    private readonly logger: Logger,
  ) {}

  /** Builds every tool folder's set and runs its start-up check (a failed check disables its tools). */
  static async create(deps: ToolDeps, factories: readonly HostedToolFactory[]): Promise<ToolRegistry> {
    const registry = new ToolRegistry(deps.config, deps.logger);
    for (const factory of factories) {
      const set = factory(deps);
      registry.sets.push(set);
      let reason: string | null = null;
      try {
        reason = set.check ? await set.check() : null;
      } catch (err) {
        reason = err instanceof Error ? err.message : String(err);
      }
      for (const tool of set.tools) {
        if (reason !== null) registry.unavailable.set(tool.type, reason);
        else registry.tools.set(tool.type, tool);
      }
      if (reason !== null) {
        deps.logger.warn('hosted tools disabled: what they need is not available here', { tools: set.tools.map((t) => t.type), reason });
      }
    }
    return registry;
  }

  /** The hosted tools an organization may use now, in catalog order. */
  enabledFor(orgId: string): HostedTool[] {
    const off = this.disabledFor(orgId);
    return [...this.tools.values()].filter((tool) => !off.has(tool.type));
  }

  /** An enabled tool of the organization by its type, else undefined. */
  get(orgId: string, type: string): HostedTool | undefined {
    const tool = this.tools.get(type);
    return tool && !this.disabledFor(orgId).has(type) ? tool : undefined;
  }

  /** Why a tool type cannot be used by the organization (null when it can). */
  whyNot(orgId: string, type: string): string | null {
    if (this.get(orgId, type)) return null;
    const unavailable = this.unavailable.get(type);
    if (unavailable !== undefined) return `${type} is not available on this gateway: ${unavailable}`;
    if (this.tools.has(type)) return `${type} is switched off for this organization.`;
    return `${type} is not a hosted tool of this gateway.`;
  }

  /**
   * The request's tools with `svc_tools` expanded to the organization's current set (each hosted
   * type once, in the caller's order first); a hosted type the organization cannot use is a 400
   * naming its position.
   */
  expand(orgId: string, tools: readonly ToolDefinition[]): ToolDefinition[] {
    const out: ToolDefinition[] = [];
    const seen = new Set<string>();
    tools.forEach((tool, index) => {
      if (tool.kind !== 'hosted') {
        out.push(tool);
        return;
      }
      if (tool.type === SVC_TOOLS) {
        for (const hosted of this.enabledFor(orgId)) {
          if (seen.has(hosted.type)) continue;
          seen.add(hosted.type);
          out.push({ kind: 'hosted', type: hosted.type, config: {} });
        }
        return;
      }
      const why = this.whyNot(orgId, tool.type);
      if (why !== null) throw new GatewayError('unsupported_tool_type', why, { param: `tools[${index}]` });
      if (seen.has(tool.type)) return;
      seen.add(tool.type);
      out.push(tool);
    });
    return out;
  }

  private disabledFor(orgId: string): Set<string> {
    const org = this.config.organizations.find((o) => o.id === orgId);
    return new Set([...this.config.tools.disabled, ...(org?.tools?.disabled ?? [])]);
  }

  /** A conversation ended: each tool set forgets its state (browser contexts, egress choices). */
  async forget(conversationId: string): Promise<void> {
    await Promise.all(this.sets.map((set) => (set.forget ? set.forget(conversationId).catch(() => undefined) : Promise.resolve())));
  }

  async close(): Promise<void> {
    await Promise.all(this.sets.map((set) => (set.close ? set.close().catch(() => undefined) : Promise.resolve())));
  }
}
