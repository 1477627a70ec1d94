// buildApp() wires config, store, pipeline and handlers into an Express app. It never listens:
// main.ts does, and tests and the benchmark use the app directly.
import { OutputItemCache } from './responses/output-item-cache';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import type { Logger } from 'winston';
import { routes } from './generated/routes';
import type { GatewayConfig } from './config/types';
import { createDispatcher, type RouteValidators } from './http/dispatch';
import { GatewayError } from './http/errors';
import { expressError } from './http/express-error';
import { familyOfPath } from './http/path-family';
import { sendError } from './http/respond';
import type { GeneratedValidator } from './http/validation';
import { errorFields } from './log/logger';
import { createMetrics, type Metrics } from './log/metrics';
import { handlers as defaultHandlers } from './operations/index';
import type { Handler } from './operations/types';
import { assemblePipeline } from './pipeline/assemble';
import type { Clock } from './pipeline/plugin';
import { ModelCalls } from './model-call/model-calls';
import { createCompaction } from './conversations/create-compaction';
import { createSignInLimit } from './console/sign-in-limit';
import { DashboardPngRenderer } from './dashboards/png-renderer';
import { ConfigModelRouter } from './providers/router';
import type { ModelRouter } from './providers/types';
import { createRedisProvider, type RedisProvider } from './queue/redis';
import { createResponseStreams } from './responses/index';
import { createRunQueue } from './queue/create-queue';
import { createRunEngine } from './runs/engine';
import { createRunService } from './runs/service';
import { createTools } from './tools';
import type { AppServices } from './services';
import { startOtlpTracing } from './telemetry/otel';
import type { Tracing } from './telemetry/tracing';
import type { Store } from './store/port';
import type { Principal } from './store/types';
import { plugins as pluginRegistry } from '../plugins';

// Generated at build time by openapi/generate.ts (AJV standalone code: nothing compiled at start-up).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const bodyValidators = require('./generated/body-validators.js') as Record<string, GeneratedValidator>;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const paramValidators = require('./generated/param-validators.js') as Record<string, GeneratedValidator>;

export interface AppDeps {
  store: Store;
  logger: Logger;
  metrics?: Metrics;
  clock?: Clock;
  models?: ModelRouter;
  redis?: RedisProvider | null;
  /** Override handlers (tests). */
  handlers?: Readonly<Record<string, Handler>>;
  /** Tracing to use instead of the one `telemetry.otlp` configures (null: off). */
  tracing?: Tracing | null;
}

export interface GatewayApp {
  readonly app: express.Express;
  readonly services: AppServices;
  close(): Promise<void>;
}

/** Checks that the document's operations and the handlers match one to one. */
export function checkHandlers(operationIds: readonly string[], handlers: Readonly<Record<string, Handler>>): void {
  const missing = operationIds.filter((id) => !handlers[id]);
  const orphaned = Object.keys(handlers).filter((id) => !operationIds.includes(id));
  const problems = [
    ...missing.map((id) => `operation ${id} has no handler`),
    ...orphaned.map((id) => `handler ${id} names no operation in the OpenAPI document`),
  ];
  if (problems.length > 0) throw new Error(`routes: ${problems.join('; ')}`);
}

function pick(table: Record<string, GeneratedValidator>, name: string | null): GeneratedValidator | null {
  if (name === null) return null;
  const validator = table[name];
  if (!validator) throw new Error(`routes: generated validator ${name} is missing (run npm run generate)`);
  return validator;
}

/** When the auth plugin is off, calls act as an admin of the first organization (documented in the README). */
function anonymousPrincipal(config: GatewayConfig): Principal {
  const org = config.organizations[0];
  return { orgId: org?.id ?? 'default', userId: 'anonymous', keyId: null, role: 'admin', groups: [] };
}

export async function buildApp(config: GatewayConfig, deps: AppDeps): Promise<GatewayApp> {
  const handlers = deps.handlers ?? defaultHandlers;
  checkHandlers(
    routes.map((r) => r.operationId),
    handlers,
  );
  const metrics = deps.metrics ?? createMetrics();
  const clock = deps.clock ?? { now: () => new Date() };
  const onRedisError = (err: Error): void => void deps.logger.warn('redis connection error', errorFields(err));
  const redis = deps.redis !== undefined ? deps.redis : config.queue.driver === 'bullmq' ? createRedisProvider(config.queue.redisUrl, onRedisError) : null;
  const ownsRedis = deps.redis === undefined && redis !== null;
  const models = deps.models ?? new ConfigModelRouter(config);
  // The OpenTelemetry SDK is loaded only when tracing is configured (src/telemetry/tracing.ts).
  const otlp = config.telemetry?.otlp;
  const tracing = deps.tracing !== undefined ? deps.tracing : otlp ? await startOtlpTracing(otlp) : null;
  const ownsTracing = deps.tracing === undefined && tracing !== null;
  const pipeline = await assemblePipeline(pluginRegistry, config, { config, store: deps.store, logger: deps.logger, metrics, clock, redis });
  // The run queue is built here (every process enqueues); the runtime starts its consumer if any.
  const runEngine = createRunEngine(createRunQueue(config.queue, deps.logger), config.queue.leaseSeconds);
  const responseStreams = createResponseStreams({
    config,
    redis,
    logger: deps.logger,
    responses: deps.store.responses,
    turns: deps.store.turns,
    ping: () => deps.store.ping(),
    metrics,
    now: () => clock.now(),
    owner: runEngine.owner,
    leaseMs: runEngine.leaseMs,
  });
  const runs = createRunService({
    store: deps.store,
    queue: runEngine.queue,
    metrics,
    logger: deps.logger,
    now: () => clock.now(),
    active: runEngine.active,
    live: responseStreams.live,
    tracing,
  });
  const modelCalls = new ModelCalls(models);
  const compaction = createCompaction({ config, store: deps.store, models, modelCalls, metrics });
  const tools = await createTools({ config, store: deps.store, logger: deps.logger, metrics, now: () => clock.now(), tracing });
  const services: AppServices = {
    config,
    store: deps.store,
    logger: deps.logger,
    metrics,
    clock,
    redis,
    models,
    modelCalls,
    compaction,
    pipeline,
    runs,
    runEngine,
    responseStreams,
    outputItems: new OutputItemCache(),
    dashboardRenderer: new DashboardPngRenderer(
      { chromiumPath: config.tools.browser.executablePath, timeoutMs: config.tools.dashboards.renderTimeoutMs },
      deps.logger,
    ),
    tools,
    tracing,
    signInLimit: createSignInLimit(config, redis, deps.logger),
    readiness: {},
  };
  if (redis) services.readiness['redis'] = async () => void (await redis.get().ping());
  if (runEngine.queue.driver === 'bullmq') services.readiness['queue'] = () => runEngine.queue.ping();

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.server.trustProxy);
  const anonymous = pipeline.has('auth') ? null : anonymousPrincipal(config);
  // Literal paths first: GET /v1/agents/list must not be taken by GET /v1/agents/{agentId}.
  const ordered = [...routes].sort((a, b) => a.pathParams.length - b.pathParams.length);
  // Operations on a literal path (the model gateway's among them) are also reached without Express's
  // router: an exact method + path lookup, the same dispatcher. Anything else (path parameters, HEAD,
  // a trailing slash, other letter case, unknown paths) goes through Express as before.
  const literal = new Map<string, ReturnType<typeof createDispatcher>>();
  for (const route of ordered) {
    const handler = handlers[route.operationId] as Handler;
    const validators: RouteValidators = {
      body: pick(bodyValidators, route.bodyValidator),
      params: pick(paramValidators, route.paramsValidator),
      query: pick(paramValidators, route.queryValidator),
    };
    const dispatch = createDispatcher(route, handler, validators, services, anonymous);
    app[route.method](route.expressPath, dispatch);
    if (route.pathParams.length === 0) literal.set(`${route.method.toUpperCase()} ${route.template}`, dispatch);
  }
  // express() returns `function app(req, res, next) { app.handle(req, res, next) }` (not in its types).
  type Handle = (req: IncomingMessage, res: ServerResponse, next?: unknown) => void;
  const entry = app as unknown as { handle: Handle };
  const routed = entry.handle.bind(app);
  entry.handle = (req, res, next) => {
    const url = req.url ?? '';
    const at = url.indexOf('?');
    const dispatch = literal.get(`${req.method ?? ''} ${at < 0 ? url : url.slice(0, at)}`);
    if (dispatch) dispatch(req, res);
    else routed(req, res, next);
  };
  app.use((req, res) => {
    sendError(res, new GatewayError('not_found', `No route for ${req.method} ${req.path}.`), familyOfPath(req.path));
  });
  // Errors Express raises itself, before any operation runs (a path segment it cannot percent-decode,
  // overlong UTF-8 among them): JSON in the path's envelope instead of its HTML error page.
  app.use((err: unknown, req: express.Request, res: express.Response, next: express.NextFunction) => {
    void next;
    const error = expressError(err);
    if (error.status >= 500) deps.logger.error('request failed', { path: req.path, code: error.code, ...errorFields(err) });
    sendError(res, error, familyOfPath(req.path));
  });

  return {
    app,
    services,
    async close() {
      await pipeline.close();
      services.signInLimit?.close();
      await tools.close();
      // The event log writes what it holds while the store and Redis are still open.
      await responseStreams.close();
      await runEngine.queue.close();
      if (!deps.models) await models.close();
      if (ownsRedis) await redis?.close();
      await services.dashboardRenderer.close();
      // Last: the spans of everything that closed above are exported before it stops.
      if (ownsTracing) await tracing?.shutdown();
    },
  };
}
