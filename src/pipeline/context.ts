import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EnvelopeFamily, GatewayError } from '../http/errors';
import type { Principal } from '../store/types';
import type { RouteSpec } from '../http/route-spec';
import type { CallAbort } from '../providers/http/call-abort';

/** What one redact() call replaced. */
export interface Redaction {
  text: string;
  /** Spans replaced. */
  count: number;
  /** Spans replaced per detector name (the audit record's counts; never the matched text). */
  detectors: Readonly<Record<string, number>>;
}

/** Replaces sensitive spans of text; bound to the caller's organization policy by the dlp plugin. */
export interface Redactor {
  /** Returns the text with every detected span replaced, and what was replaced. */
  redact(text: string): Redaction;
}

/**
 * Mutates an upstream-bound JSON body in place (e.g. field stripping); returns true when it changed
 * anything, so an unchanged body can be forwarded as the caller's original bytes.
 */
export type UpstreamBodyTransform = (body: Record<string, unknown>) => boolean;

/** Token usage of one upstream call, reported by the provider layer for metrics, audit and the store. */
export interface UsageReport {
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** Of promptTokens, those read from a prompt cache. */
  cachedPromptTokens: number;
  /** USD by the model's pricing; null when it has none. */
  cost: number | null;
}

/** The model call a request made: what it called, and how it ended when it failed. */
export interface ModelCallRecord {
  /** The configured model id. */
  model: string;
  /** The configured provider's name. */
  provider: string;
  /** The stable error code (ERROR_REGISTRY) when the call failed, also after a stream started. */
  errorCode: string | null;
}

/** The typed per-request context every plugin and handler receives. */
export interface RequestContext {
  readonly requestId: string;
  readonly route: RouteSpec;
  readonly family: EnvelopeFamily;
  /** process.hrtime.bigint() at arrival. */
  readonly startedAt: bigint;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Set by the auth plugin (or the anonymous principal when auth is off). */
  principal: Principal | null;
  /** Path parameters, validated and coerced. */
  params: Record<string, string>;
  /** Query parameters, validated and coerced. */
  query: Record<string, unknown>;
  /** Parsed JSON body (undefined when the operation takes none). */
  body: unknown;
  /** The body's original bytes, for pass-through forwarding. */
  rawBody: Buffer | null;
  /** Ids of the resources the call touched, for the audit trail (path params are added automatically). */
  resourceIds: Record<string, string>;
  /** The organization's DLP redactor when its policy is on, else null. */
  dlp: Redactor | null;
  /** Spans the DLP redactor replaced in this request, per detector (null: no policy applied). */
  redactions: Record<string, number> | null;
  /** Applied in order to every upstream-bound body. */
  upstreamTransforms: UpstreamBodyTransform[];
  /** Token usage reported by upstream calls during this request. */
  usage: UsageReport[];
  /** The model call of a gateway request, set when its model resolved (for the audit record). */
  modelCall: ModelCallRecord | null;
  /**
   * Aborted when the client disconnects before the response finished. Cheap (no EventTarget); its
   * `.signal` is a real AbortSignal made on first use, for library calls that need one.
   */
  readonly abort: CallAbort;
  /** The error the request ended with, if any (set before onFinish hooks run). */
  error: GatewayError | null;
  /**
   * True once the response closed and the onFinish hooks ran: usage reported after that (a stored
   * response generated on after its caller left) is written by its meter itself.
   */
  finished: boolean;
}

/**
 * Drops what a finished request's context points to: called once its response closed (the onFinish
 * hooks have read it) and its handler settled, when nothing of the request reads them any more. Why:
 * a context that reaches the old generation (any request in flight across two scavenges) kept its
 * request, response, body and transforms alive through every later scavenge until the next full
 * collection, and each of those dragged more into the old generation: at c = 64 about three quarters
 * of the bytes promoted per scavenge (770 -> 200 KB, measured with V8's GC profiler). What code running
 * past the request may still use stays: the principal, parameters, resource ids, the abort state, the
 * error and `finished`.
 */
export function releaseRequestContext(ctx: RequestContext): void {
  const released = ctx as { -readonly [K in keyof RequestContext]: RequestContext[K] | null };
  released.req = null;
  released.res = null;
  released.body = undefined;
  released.rawBody = null;
  released.upstreamTransforms = [];
  released.usage = [];
  released.modelCall = null;
}
