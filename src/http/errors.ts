// One error hierarchy for the whole service: every error has an HTTP status, a stable code from the
// registry below, an optional `param` (the offending field) and a cause. It is serialised into the
// envelope of the path family that raised it (see envelope.ts).

export type EnvelopeFamily = 'flat' | 'openai' | 'anthropic';

interface ErrorSpec {
  status: number;
  /** OpenAI-style `error.type` for the nested envelope. */
  type: string;
  /** `error.code` on the wire for the nested envelope; null where the spec shows none. */
  wireCode: string | null;
}

export const ERROR_REGISTRY = {
  bad_request: { status: 400, type: 'invalid_request_error', wireCode: 'invalid_request' },
  invalid_json: { status: 400, type: 'invalid_request_error', wireCode: 'invalid_json' },
  validation_failed: { status: 400, type: 'invalid_request_error', wireCode: 'invalid_request' },
  invalid_id: { status: 400, type: 'invalid_request_error', wireCode: 'invalid_id' },
  invalid_starting_after: { status: 400, type: 'invalid_request_error', wireCode: null },
  uninspectable_file: { status: 400, type: 'invalid_request_error', wireCode: null },
  unsupported_tool_type: { status: 400, type: 'invalid_request_error', wireCode: 'unsupported_tool_type' },
  unsupported_parameter: { status: 400, type: 'invalid_request_error', wireCode: 'unsupported_parameter' },
  mutually_exclusive_parameters: { status: 400, type: 'invalid_request_error', wireCode: 'mutually_exclusive_parameters' },
  unsupported_operation: { status: 400, type: 'invalid_request_error', wireCode: 'unsupported_operation' },
  unauthorized: { status: 401, type: 'authentication_error', wireCode: 'invalid_api_key' },
  forbidden: { status: 403, type: 'permission_error', wireCode: 'forbidden' },
  not_found: { status: 404, type: 'invalid_request_error', wireCode: null },
  model_not_found: { status: 404, type: 'invalid_request_error', wireCode: 'model_not_found' },
  previous_response_not_found: { status: 404, type: 'invalid_request_error', wireCode: 'previous_response_not_found' },
  method_not_allowed: { status: 405, type: 'invalid_request_error', wireCode: 'method_not_allowed' },
  request_timeout: { status: 408, type: 'invalid_request_error', wireCode: 'request_timeout' },
  conflict: { status: 409, type: 'invalid_request_error', wireCode: 'conflict' },
  conversation_locked: { status: 409, type: 'invalid_request_error', wireCode: 'conversation_locked' },
  body_too_large: { status: 413, type: 'invalid_request_error', wireCode: 'body_too_large' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', wireCode: 'unsupported_media_type' },
  missing_inputs: { status: 422, type: 'invalid_request_error', wireCode: 'missing_inputs' },
  rate_limited: { status: 429, type: 'rate_limit_error', wireCode: 'rate_limit_exceeded' },
  /** A token or cost budget (organization, user or key) is used up for its period. */
  budget_exceeded: { status: 429, type: 'insufficient_quota', wireCode: 'insufficient_quota' },
  headers_too_large: { status: 431, type: 'invalid_request_error', wireCode: 'headers_too_large' },
  internal: { status: 500, type: 'server_error', wireCode: 'internal_error' },
  not_implemented: { status: 501, type: 'server_error', wireCode: 'not_implemented' },
  upstream_error: { status: 502, type: 'upstream_error', wireCode: 'upstream_error' },
  unavailable: { status: 503, type: 'server_error', wireCode: 'unavailable' },
  upstream_timeout: { status: 504, type: 'upstream_error', wireCode: 'upstream_timeout' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_REGISTRY;

/** The spec's flat-envelope labels (`error` field) by status. */
export const STATUS_LABELS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export interface GatewayErrorOptions {
  param?: string;
  cause?: unknown;
  headers?: Record<string, string>;
  /** Overrides the registry status (e.g. an upstream's own 4xx passed through). */
  status?: number;
  /** Overrides the registry type (e.g. the upstream's error type). */
  type?: string;
  /** Overrides the wire code. */
  wireCode?: string | null;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  readonly wireCode: string | null;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: GatewayErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    const spec: ErrorSpec = ERROR_REGISTRY[code];
    this.status = options.status ?? spec.status;
    this.type = options.type ?? spec.type;
    this.wireCode = options.wireCode !== undefined ? options.wireCode : spec.wireCode;
    this.param = options.param;
    this.headers = options.headers ?? {};
  }
}

export const isGatewayError = (err: unknown): err is GatewayError => err instanceof GatewayError;

/** Anything thrown becomes a GatewayError; unknown errors are 500 with a generic message (details go to the log). */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError('internal', 'The server failed to process the request; retry with backoff.', { cause: err });
}
