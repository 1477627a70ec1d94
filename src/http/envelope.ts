import { STATUS_LABELS, type EnvelopeFamily, type GatewayError } from './errors';

/**
 * Anthropic's error `type` by status (https://docs.anthropic.com/en/api/errors): the listed statuses
 * have their own; any other 4XX is `invalid_request_error` ("may also be used for other 4XX status
 * codes not listed"), any other 5XX `api_error`. 503 is overloaded, as 529.
 */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
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
    return { type: 'error', error: { type: anthropicErrorType(err.status), message: err.message } };
  }
  return { error: { message: err.message, type: err.type, code: err.wireCode, param: err.param ?? null } };
}
