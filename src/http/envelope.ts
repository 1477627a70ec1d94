import { STATUS_LABELS, type EnvelopeFamily, type GatewayError } from './errors';

/** Anthropic's error `type` by status (their Messages API error shapes). */
function anthropicType(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return 'api_error';
  }
}

/**
 * Serialises an error into the envelope of its path family:
 * - flat (agents, runs, evals, admin): `{ error: <label>, message }`
 * - openai (responses, conversations, chat/completions, completions, models): `{ error: { message, type, code, param } }`
 * - anthropic (/v1/messages): `{ type: "error", error: { type, message } }`
 * A 401 from authentication is always flat (spec, Authentication rule 4).
 */
export function errorEnvelope(err: GatewayError, family: EnvelopeFamily): unknown {
  if (family === 'flat' || err.code === 'unauthorized') {
    return { error: STATUS_LABELS[err.status] ?? 'Error', message: err.message };
  }
  if (family === 'anthropic') {
    return { type: 'error', error: { type: anthropicType(err.status), message: err.message } };
  }
  return { error: { message: err.message, type: err.type, code: err.wireCode, param: err.param ?? null } };
}
