// What the transport makes of an upstream's failures. Two rules. Nothing the upstream sent (an error
// body, a header value, a fragment of a malformed reply) reaches a log line: every GatewayError built
// from upstream content carries a cause that describes the failure without quoting it (the request
// logger prints the cause, its message and its stack). And an error body becomes the caller's message
// only through a mapper that picks a message field out of JSON; a body that is not JSON is not echoed.
import { GatewayError } from '../../http/errors';

export type UpstreamErrorMapper = (status: number, bodyText: string) => { message: string; type?: string };

/** A failure described for logs without any of the upstream's bytes in it. */
export class UpstreamFault extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'UpstreamFault';
  }
}

/**
 * A loggable stand-in for an error whose message may quote upstream content (a JSON.parse SyntaxError
 * quotes the text it choked on; llhttp errors quote the bytes): its name and code, not its message.
 */
export function withheld(err: unknown, what: string): UpstreamFault {
  const name = err instanceof Error ? err.name : typeof err;
  return new UpstreamFault(`${what} (${name}; details withheld: they may quote upstream content)`, errorCode(err));
}

/** The first string `code` along an error's cause chain (undici wraps socket errors). */
export function errorCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; current !== null && typeof current === 'object' && depth < 5; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const cause = (current as { cause?: unknown }).cause;
    if (cause === current) break;
    current = cause;
  }
  return undefined;
}

/** OpenAI-style error bodies `{error: {message, type}}`, else a generic message naming the status. */
export function defaultErrorMapper(providerName: string): UpstreamErrorMapper {
  return (status, bodyText) => {
    try {
      const parsed = JSON.parse(bodyText) as { error?: { message?: unknown; type?: unknown } | string; message?: unknown };
      const error = parsed.error;
      if (error && typeof error === 'object' && typeof error.message === 'string' && error.message) {
        return typeof error.type === 'string' ? { message: error.message, type: error.type } : { message: error.message };
      }
      if (typeof error === 'string' && error) return { message: error };
      if (typeof parsed.message === 'string' && parsed.message) return { message: parsed.message };
    } catch {
      // not JSON: fall through to the generic message
    }
    return { message: `Upstream provider ${providerName} answered HTTP ${status}.` };
  };
}

/**
 * The caller's error for an upstream's error answer: the upstream's message (it is about the caller's
 * own request: it goes back to them), with a cause that logs only the provider and status.
 */
export function upstreamStatusError(
  providerName: string,
  status: number,
  mapped: { message: string; type?: string },
  headers: Record<string, string>,
): GatewayError {
  return new GatewayError('upstream_error', mapped.message, {
    status: status >= 400 && status <= 599 ? status : 502,
    ...(mapped.type !== undefined ? { type: mapped.type } : {}),
    headers,
    cause: new UpstreamFault(`Upstream provider ${providerName} answered HTTP ${status}.`, `HTTP_${status}`),
  });
}
