import type { RequestContext } from '../pipeline/context';
import type { AppServices } from '../services';

/** A JSON reply; a handler that streams writes to ctx.res itself and returns undefined. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Pre-serialised body bytes/text with their content type (pass-through, non-JSON documents). */
  raw?: { contentType: string; data: string | Buffer };
}

/** Thin: context in, service call, result out. */
export type Handler = (ctx: RequestContext, services: AppServices) => Promise<Reply | undefined>;
