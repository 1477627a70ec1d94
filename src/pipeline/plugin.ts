// The plugin contract (see plugins/README.md for the lifecycle diagram). A plugin is one folder under
// plugins/ exporting a PluginDefinition; plugins/index.ts lists them. create() runs once at boot.
import type { Logger } from 'winston';
import type { GatewayConfig } from '../config/types';
import type { Store } from '../store/port';
import type { Metrics } from '../log/metrics';
import type { Redactor, RequestContext } from './context';
import type { RedisProvider } from '../queue/redis';
import type { BudgetGuard } from '../model-call/budget-guard';

/**
 * Where a plugin runs. In: identify (request id, body limit) -> authenticate -> admit (rate limit)
 * -> [body read + generated validation] -> inspect (DLP) -> handler. Out, in reverse: respond
 * (upstream body transforms, stream events) -> record (audit, always runs).
 */
export type Phase = 'identify' | 'authenticate' | 'admit' | 'inspect' | 'respond' | 'record';

export const PHASE_ORDER: readonly Phase[] = ['identify', 'authenticate', 'admit', 'inspect', 'respond', 'record'];

export interface Clock {
  now(): Date;
}

export interface PluginDeps {
  readonly config: GatewayConfig;
  readonly store: Store;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock: Clock;
  /** Shared Redis connection, created on first use (only when queue.driver is bullmq). */
  readonly redis: RedisProvider | null;
}

export interface FinishInfo {
  status: number;
  /** Client went away before the response finished. */
  aborted: boolean;
}

export interface PluginHooks {
  /** Runs on the way in; throw a GatewayError to reject the request. */
  onRequest?(ctx: RequestContext): void | Promise<void>;
  /** Runs when the request ended: success, error or client abort. Must not throw. */
  onFinish?(ctx: RequestContext, info: FinishInfo): void;
  /** Flush and release on shutdown. */
  close?(): Promise<void>;
  /** Readiness contribution (e.g. a Redis connection). */
  ready?(): Promise<void>;
  /**
   * Text redaction outside a request (agent run prompts): the organization's redactor, null when it
   * has no policy. Offered by the dlp plugin, so the core needs none of its internals.
   */
  redactorFor?(orgId: string): Redactor | null;
  /**
   * Token and cost budgets outside the request pipeline (agent runs, usage reported after a request
   * ended, GET /v1/usage/budgets). Offered by the budgets plugin.
   */
  readonly budgets?: BudgetGuard;
}

export interface JsonSchema {
  [key: string]: unknown;
}

export interface PluginDefinition<C extends { enabled: boolean } = { enabled: boolean }> {
  /** Equal to the folder name and the key under `plugins:` in the config. */
  readonly name: string;
  readonly phase: Phase;
  /** Order within the phase (lower first; ties broken by name). */
  readonly order: number;
  /** Plugins that must be enabled and run earlier. */
  readonly requires: readonly string[];
  /** 'closed': an internal failure rejects the request; 'open': it is logged and the request continues. */
  readonly failMode: 'closed' | 'open';
  readonly description: string;
  /** JSON Schema of `plugins.<name>`; every field has a description and a default. */
  readonly configSchema: JsonSchema;
  create(config: C, deps: PluginDeps): PluginHooks | Promise<PluginHooks>;
}

/** Helps plugin modules keep their config type while the registry holds them uniformly. */
export function definePlugin<C extends { enabled: boolean }>(definition: PluginDefinition<C>): PluginDefinition {
  return definition as unknown as PluginDefinition;
}
