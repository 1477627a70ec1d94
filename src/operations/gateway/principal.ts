import { GatewayError } from '../../http/errors';
import type { RequestContext } from '../../pipeline/context';

/** The caller's organization (the dispatcher sets a principal on every authenticated operation). */
export function orgOf(ctx: RequestContext): string {
  if (!ctx.principal) throw new GatewayError('unauthorized', 'Missing API key.');
  return ctx.principal.orgId;
}
