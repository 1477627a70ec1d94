// Google API error bodies (`{error: {code, message, status}}`, or a one-element array of it as the
// non-SSE stream endpoint sends) to the message the client sees with the upstream's HTTP status.
import type { UpstreamErrorMapper } from '../http/upstream-errors';
import type { GeminiErrorBody } from './gemini-wire-types';

function errorOf(parsed: unknown): GeminiErrorBody['error'] | undefined {
  const body = Array.isArray(parsed) ? (parsed[0] as unknown) : parsed;
  if (body === null || typeof body !== 'object') return undefined;
  return (body as GeminiErrorBody).error;
}

export function geminiErrorMapper(providerName: string): UpstreamErrorMapper {
  return (status, bodyText) => {
    try {
      const error = errorOf(JSON.parse(bodyText));
      if (error && typeof error.message === 'string' && error.message.length > 0) return { message: error.message };
    } catch {
      // not JSON (a proxy's HTML page, say): fall through to the generic message
    }
    return { message: `Upstream provider ${providerName} (gemini) answered HTTP ${status}.` };
  };
}
