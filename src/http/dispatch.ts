// The request lifecycle of every operation (documented in plugins/README.md):
// request id -> plugins (identify, authenticate, admit) -> path/query validation -> body read (size
// limit) + generated validation -> plugins (inspect) -> handler -> reply; on close: plugins' onFinish
// (respond, record, reverse order), metrics and the access log. Errors become the envelope of the
// operation's path family. A multipart upload's body is left to its handler (src/files/).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RouteSpec } from './route-spec';
import { errorFields } from '../log/logger';
import type { AssembledPlugin } from '../pipeline/assemble';
import { releaseRequestContext, type RequestContext } from '../pipeline/context';
import type { Handler } from '../operations/types';
import type { AppServices } from '../services';
import { CallAbort } from '../providers/http/call-abort';
import type { Principal } from '../store/types';
import { readJsonBody } from './body';
import { GatewayError, toGatewayError } from './errors';
import { sendError, sendJson } from './respond';
import { validationError, type GeneratedValidator } from './validation';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface RouteValidators {
  body: GeneratedValidator | null;
  params: GeneratedValidator | null;
  query: GeneratedValidator | null;
}

function parseQuery(url: string | undefined): Record<string, unknown> {
  const at = url?.indexOf('?') ?? -1;
  if (!url || at < 0) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(url.slice(at + 1))) {
    const existing = out[key];
    if (existing === undefined) out[key] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else out[key] = [existing, value];
  }
  return out;
}

/**
 * A NUL character (`%00`) in a path or query parameter is refused here: no identifier or filter of
 * ours contains one, and the SQL stores cannot even compare text holding one (the query fails).
 */
function refuseNul(values: Readonly<Record<string, unknown>>, where: 'path' | 'query'): void {
  // for-in: most calls have no parameter at all, and this runs on every request.
  for (const name in values) {
    const value = values[name];
    const texts = Array.isArray(value) ? (value as unknown[]) : [value];
    if (name.includes('\0') || texts.some((text) => typeof text === 'string' && text.includes('\0'))) {
      const shown = name.replaceAll('\0', '\\0');
      throw new GatewayError('validation_failed', `Invalid request: '${shown}' must not contain a NUL character (${where} parameter).`, { param: shown });
    }
  }
}

function failedOpen(err: unknown, plugin: AssembledPlugin, ctx: RequestContext, services: AppServices): void {
  if (err instanceof GatewayError || plugin.definition.failMode === 'closed') throw err;
  // Fail-open plugins (declared in their definition) must not take the API down with them.
  services.logger.warn('plugin failed open', { plugin: plugin.definition.name, requestId: ctx.requestId, ...errorFields(err) });
}

/**
 * Runs the plugins' onRequest hooks in order. Hooks that complete synchronously (a cached key, an
 * in-memory counter) cost no promise: only from the first hook that returns one does the rest run
 * asynchronously. Returns undefined when everything ran synchronously.
 */
function runHooks(plugins: readonly AssembledPlugin[], ctx: RequestContext, services: AppServices, from = 0): Promise<void> | undefined {
  for (let i = from; i < plugins.length; i++) {
    const plugin = plugins[i]!;
    if (!ctx.route.authenticated && plugin.definition.phase !== 'identify') continue;
    let result: unknown;
    try {
      result = plugin.hooks.onRequest?.(ctx);
    } catch (err) {
      failedOpen(err, plugin, ctx, services);
      continue;
    }
    if (result !== undefined && typeof (result as PromiseLike<unknown>).then === 'function') {
      return Promise.resolve(result as PromiseLike<unknown>).then(
        () => runHooks(plugins, ctx, services, i + 1),
        (err: unknown) => {
          failedOpen(err, plugin, ctx, services);
          return runHooks(plugins, ctx, services, i + 1);
        },
      );
    }
  }
  return undefined;
}

function joinedParams(params: Record<string, string | string[]> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(params ?? {})) out[name] = Array.isArray(value) ? value.join('/') : value;
  return out;
}

export function createDispatcher(
  route: RouteSpec,
  handler: Handler,
  validators: RouteValidators,
  services: AppServices,
  anonymous: Principal | null,
): (req: IncomingMessage & { params?: Record<string, string | string[]> }, res: ServerResponse) => void {
  const { pipeline, logger, metrics, config, tracing } = services;
  const method = route.method.toUpperCase();
  const spanName = `${method} ${route.template}`;
  const bodyLimit = config.server.bodyLimitBytes;
  const accessLog = config.logging.accessLog;
  const timer = metrics.httpDuration.labels(route.operationId);
  const counted = (status: string) => metrics.httpRequests.labels(route.operationId, route.method, status);
  // A rest-of-path parameter (`*name`, x-rest in the document) arrives as its segments: joined back.
  const restPath = route.expressPath.includes('*');

  return (req, res) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', requestId);
    // Tracing on: the request's server span, child of the caller's traceparent (off: null, no work).
    const span =
      tracing === null
        ? null
        : tracing.request(spanName, req.headers, {
            'http.request.method': method,
            'http.route': route.template,
            'agw.operation_id': route.operationId,
            'agw.request_id': requestId,
          });
    const abort = new CallAbort();
    // A plain data literal on purpose: with an accessor in it (a lazy `get signal()`) V8 kept whole
    // requests alive across scavenges (bytes promoted per scavenge 224 KB -> 835 KB, measured).
    const ctx: RequestContext = {
      requestId,
      route,
      family: route.family,
      startedAt: process.hrtime.bigint(),
      req,
      res,
      principal: null,
      params: restPath ? joinedParams(req.params) : { ...((req.params as Record<string, string> | undefined) ?? {}) },
      query: {},
      body: undefined,
      rawBody: null,
      resourceIds: {},
      dlp: null,
      redactions: null,
      upstreamTransforms: [],
      usage: [],
      modelCall: null,
      abort,
      error: null,
      finished: false,
    };

    // Both the response's close and the handler's end release the context (whichever comes last).
    let pending = 2;
    const settled = (): void => {
      if (--pending === 0) releaseRequestContext(ctx);
    };

    res.once('close', () => {
      ctx.finished = true;
      const aborted = !res.writableFinished;
      if (aborted) abort.abort();
      const status = aborted && !res.headersSent ? 499 : res.statusCode;
      for (const plugin of pipeline.finishers) {
        try {
          plugin.hooks.onFinish?.(ctx, { status, aborted });
        } catch (err) {
          logger.error('plugin onFinish threw', { plugin: plugin.definition.name, requestId, ...errorFields(err) });
        }
      }
      const seconds = Number(process.hrtime.bigint() - ctx.startedAt) / 1e9;
      timer.observe(seconds);
      counted(String(status)).inc();
      if (span) {
        span.set({ 'http.response.status_code': status, 'agw.org_id': ctx.principal?.orgId });
        if (status >= 500) span.fail(ctx.error?.code ?? String(status));
        span.end();
      }
      if (accessLog) {
        logger.info('request', {
          requestId,
          traceId: span?.traceId,
          operationId: route.operationId,
          method,
          route: route.template,
          status,
          latencyMs: Math.round(seconds * 1e6) / 1e3,
          orgId: ctx.principal?.orgId,
          userId: ctx.principal?.userId,
          keyId: ctx.principal?.keyId ?? undefined,
        });
      }
      settled();
    });

    const run = async (): Promise<void> => {
      try {
        const admitted = runHooks(pipeline.beforeBody, ctx, services);
        if (admitted) await admitted;
        if (route.authenticated && ctx.principal === null) {
          if (anonymous === null) throw new GatewayError('unauthorized', 'Missing API key.');
          ctx.principal = anonymous;
        }
        refuseNul(ctx.params, 'path');
        if (validators.params && !validators.params(ctx.params)) throw validationError('path', validators.params.errors);
        // Recorded only once valid, and only those the operation declares (a secret token never is).
        for (const name of route.auditedParams) {
          const value = ctx.params[name];
          if (value !== undefined) ctx.resourceIds[name] = value;
        }
        ctx.query = parseQuery(req.url);
        refuseNul(ctx.query, 'query');
        if (validators.query && !validators.query(ctx.query)) throw validationError('query', validators.query.errors);
        if (validators.body) {
          const body = await readJsonBody(req, bodyLimit);
          if (body === null) {
            if (route.bodyRequired) throw new GatewayError('validation_failed', 'Invalid request: a JSON request body is required.');
          } else {
            if (!validators.body(body.value)) throw validationError('body', validators.body.errors);
            ctx.body = body.value;
            ctx.rawBody = body.raw;
          }
        } else if (!route.multipartBody) {
          // Operations without a body ignore one (e.g. restart): drain it so the socket can be reused.
          req.resume();
        }
        const inspected = runHooks(pipeline.afterValidation, ctx, services);
        if (inspected) await inspected;
        const reply = await handler(ctx, services);
        if (reply && !res.headersSent) {
          if (reply.raw) {
            res.writeHead(reply.status, { ...reply.headers, 'content-type': reply.raw.contentType });
            res.end(reply.raw.data);
          } else if (reply.body === undefined) {
            res.writeHead(reply.status, reply.headers ?? {});
            res.end();
          } else {
            sendJson(res, reply.status, reply.body, reply.headers);
          }
        }
      } catch (thrown) {
        const err = toGatewayError(thrown);
        ctx.error = err;
        if (err.status >= 500) logger.error('request failed', { requestId, operationId: route.operationId, code: err.code, ...errorFields(err.cause ?? err) });
        else logger.debug('request rejected', { requestId, operationId: route.operationId, code: err.code, status: err.status });
        if (!abort.aborted) {
          try {
            sendError(res, err, route.family);
          } catch (writeFailure) {
            // The error response itself could not be written (a header value Node refuses): only this
            // connection is lost, never the process (an unhandled rejection here used to exit it).
            logger.error('error response could not be written; connection closed', { requestId, operationId: route.operationId, ...errorFields(writeFailure) });
            res.destroy();
          }
        }
      }
    };
    void (span ? span.run(run) : run()).finally(settled);
  };
}
