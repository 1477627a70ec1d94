// The app's dependencies, built once per process and passed in (no module-level singletons), so every
// test can build an isolated app.
import type { Tools } from './tools';
import type { Logger } from 'winston';
import type { GatewayConfig } from './config/types';
import type { Metrics } from './log/metrics';
import type { Clock } from './pipeline/plugin';
import type { Pipeline } from './pipeline/assemble';
import type { ModelRouter } from './providers/types';
import type { ModelCalls } from './model-call/model-calls';
import type { ConversationCompaction } from './conversations/compaction';
import type { SignInLimit } from './console/sign-in-limit';
import type { DashboardPngRenderer } from './dashboards/png-renderer';
import type { RedisProvider } from './queue/redis';
import type { OutputItemCache } from './responses/output-item-cache';
import type { ResponseStreams } from './responses/index';
import type { RunEngine } from './runs/engine';
import type { RunService } from './runs/port';
import type { Store } from './store/port';
import type { Tracing } from './telemetry/tracing';

export interface AppServices {
  readonly config: GatewayConfig;
  readonly store: Store;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock: Clock;
  readonly redis: RedisProvider | null;
  readonly models: ModelRouter;
  /** The one model-call path (src/model-call/): every handler, run and judge call goes through it. */
  readonly modelCalls: ModelCalls;
  /** Compaction of stored conversations near their model's context window (Responses rule 6). */
  readonly compaction: ConversationCompaction;
  readonly pipeline: Pipeline;
  /** Agent runs: trigger, restart, cancel, retry (the run engine). */
  readonly runs: RunService;
  /** The run engine's queue and executing runs, shared by the run service and the runtime. */
  readonly runEngine: RunEngine;
  /** Streaming responses: live event bus, batched event log, leases, lapsed-lease sweeper. */
  readonly responseStreams: ResponseStreams;
  /** Output items of recent stateless translated responses, for item_reference (output-item-cache.ts). */
  readonly outputItems: OutputItemCache;
  /** Dashboard PNGs through headless Chromium (launched on first use). */
  readonly dashboardRenderer: DashboardPngRenderer;
  /** Server-side tools: the hosted catalog, workspaces and the tool loop (src/tools/). */
  readonly tools: Tools;
  /** OpenTelemetry tracing when `telemetry.otlp` is configured, else null (no span work at all). */
  readonly tracing: Tracing | null;
  /** Requests per client address to the console's public sign-in routes (console.signInRateLimit), null when off. */
  readonly signInLimit: SignInLimit | null;
  /** Extra readiness checks by name (e.g. queue), each resolving when its dependency is reachable. */
  readonly readiness: Record<string, () => Promise<void>>;
}
