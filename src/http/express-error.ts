import { GatewayError, toGatewayError } from './errors';

/**
 * An error Express's router passed on: a URIError from decoding a path parameter (an invalid
 * percent-escape, or bytes that are not UTF-8, overlong forms included) comes with status 400;
 * anything else is ours to report as a 500.
 */
export function expressError(err: unknown): GatewayError {
  const status = (err as { status?: unknown } | null)?.status;
  if (err instanceof URIError || status === 400) {
    return new GatewayError('bad_request', 'Invalid request: the path is not valid percent-encoded UTF-8 (RFC 3986).', { cause: err });
  }
  return toGatewayError(err);
}
