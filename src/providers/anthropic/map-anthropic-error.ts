// Upstream error bodies of the three hostings → a clear message for the client (the transport adds the
// upstream's status). Anthropic: `{type: "error", error: {type, message}}`
// (https://docs.anthropic.com/en/api/errors). Vertex: Google's `{error: {code, message, status}}` for
// platform errors, Anthropic's envelope for model errors. Bedrock: `{message}` with the exception name
// in a header.
import type { UpstreamErrorMapper } from '../http/upstream-errors';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Anthropic error types that are also OpenAI error types: kept, so clients branch on them the same way. */
const KNOWN_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
  'request_too_large',
]);

export function anthropicErrorMapper(providerName: string): UpstreamErrorMapper {
  return (status, bodyText) => {
    const prefix = `Upstream provider ${providerName} answered HTTP ${status}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(bodyText);
    } catch {
      return { message: `${prefix}.` };
    }
    if (isRecord(parsed)) {
      const error = parsed['error'];
      if (isRecord(error) && typeof error['message'] === 'string') {
        const type = typeof error['type'] === 'string' ? error['type'] : typeof error['status'] === 'string' ? error['status'] : undefined;
        const message = `${prefix}${type ? ` (${type})` : ''}: ${error['message']}`;
        return type && KNOWN_TYPES.has(type) ? { message, type } : { message };
      }
      const message = parsed['message'] ?? parsed['Message'];
      if (typeof message === 'string') return { message: `${prefix}: ${message}` };
    }
    return { message: `${prefix}.` };
  };
}
