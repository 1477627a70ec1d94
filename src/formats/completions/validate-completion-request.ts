// POST /v1/completions (legacy): the spec shows no shape, so the route checks only what it needs to
// route (a `model`), rejects the opt-in extension block like chat completions, and forwards the rest.
import { GatewayError } from '../../http/errors';
import { rejectExtensions } from '../chat/validate-chat-request';

export interface CompletionRequest {
  model: string;
  prompt?: unknown;
  stream?: boolean;
  [extra: string]: unknown;
}

export function validateCompletionRequest(body: unknown): CompletionRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('validation_failed', 'Invalid request: the body must be a JSON object.', { param: 'body' });
  }
  const record = body as Record<string, unknown>;
  if (typeof record['model'] !== 'string' || record['model'] === '') {
    throw new GatewayError('validation_failed', "Invalid request: 'model' is required and must be a string.", { param: 'model' });
  }
  if (record['stream'] !== undefined && typeof record['stream'] !== 'boolean') {
    throw new GatewayError('validation_failed', "Invalid request: 'stream' must be a boolean.", { param: 'stream' });
  }
  rejectExtensions(record);
  return record as CompletionRequest;
}
