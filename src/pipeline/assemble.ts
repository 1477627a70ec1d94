import type { GatewayConfig } from '../config/types';
import { GatewayError } from '../http/errors';
import { errorFields } from '../log/logger';
import type { RequestContext } from './context';
import { PHASE_ORDER, type PluginDefinition, type PluginDeps, type PluginHooks } from './plugin';

export interface AssembledPlugin {
  readonly definition: PluginDefinition;
  readonly hooks: PluginHooks;
}

/** The enabled plugins, instantiated once, in execution order. */
export interface Pipeline {
  readonly plugins: readonly AssembledPlugin[];
  /** onRequest hooks before the body is read: identify, authenticate, admit. */
  readonly beforeBody: readonly AssembledPlugin[];
  /** onRequest hooks after validation: inspect. */
  readonly afterValidation: readonly AssembledPlugin[];
  /** onFinish hooks, in reverse order (respond, then record). */
  readonly finishers: readonly AssembledPlugin[];
  has(name: string): boolean;
  /**
   * Runs the admit phase (rate limits) for a caller a handler identified itself, on an operation
   * without an API key (a webhook runs as its agent's creator): such calls draw on the same budgets.
   */
  admit(ctx: RequestContext): Promise<void>;
  close(): Promise<void>;
  ready(): Promise<void>;
}

export class PipelineError extends Error {}

/** Orders by phase, then `order`, then name (Kong's rule). */
export function sortPlugins(definitions: readonly PluginDefinition[]): PluginDefinition[] {
  return [...definitions].sort((a, b) => PHASE_ORDER.indexOf(a.phase) - PHASE_ORDER.indexOf(b.phase) || a.order - b.order || a.name.localeCompare(b.name));
}

/** Builds the pipeline from the `plugins:` block: a disabled plugin is simply not in the chain. */
export async function assemblePipeline(registry: readonly PluginDefinition[], config: GatewayConfig, deps: PluginDeps): Promise<Pipeline> {
  const names = new Set(registry.map((p) => p.name));
  for (const key of Object.keys(config.plugins)) {
    if (!names.has(key)) throw new PipelineError(`plugins.${key}: no such plugin`);
  }
  const enabled = sortPlugins(registry.filter((p) => config.plugins[p.name]?.enabled === true));
  const position = new Map(enabled.map((p, i) => [p.name, i]));
  for (const plugin of enabled) {
    for (const required of plugin.requires) {
      const at = position.get(required);
      if (at === undefined) throw new PipelineError(`plugins.${plugin.name}: requires plugin "${required}" to be enabled`);
      if (at > (position.get(plugin.name) ?? 0)) throw new PipelineError(`plugins.${plugin.name}: must run after "${required}"`);
    }
  }
  const plugins: AssembledPlugin[] = [];
  for (const definition of enabled) {
    const pluginConfig = config.plugins[definition.name] ?? { enabled: true };
    plugins.push({ definition, hooks: await definition.create(pluginConfig, deps) });
  }
  const early = new Set(['identify', 'authenticate', 'admit']);
  const admitting = plugins.filter((p) => p.hooks.onRequest && p.definition.phase === 'admit');
  return {
    plugins,
    beforeBody: plugins.filter((p) => p.hooks.onRequest && early.has(p.definition.phase)),
    afterValidation: plugins.filter((p) => p.hooks.onRequest && !early.has(p.definition.phase)),
    finishers: plugins.filter((p) => p.hooks.onFinish).reverse(),
    has: (name) => position.has(name),
    async admit(ctx) {
      for (const plugin of admitting) {
        try {
          await plugin.hooks.onRequest?.(ctx);
        } catch (err) {
          // As on the way in: a rejection, or any failure of a fail-closed plugin, ends the request.
          if (err instanceof GatewayError || plugin.definition.failMode === 'closed') throw err;
          deps.logger.warn('plugin failed open', { plugin: plugin.definition.name, requestId: ctx.requestId, ...errorFields(err) });
        }
      }
    },
    async close() {
      for (const plugin of [...plugins].reverse()) await plugin.hooks.close?.();
    },
    async ready() {
      await Promise.all(plugins.flatMap((p) => (p.hooks.ready ? [p.hooks.ready()] : [])));
    },
  };
}
